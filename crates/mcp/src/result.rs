//! What the model is told of a tool call's result, a resource and a prompt: text as it is,
//! structured content as JSON, images and audio as a note (the model reads text only), an error
//! result marked; capped like every tool's output.

use rmcp::model::{CallToolResult, RawContent, ResourceContents};

/// A tool call's result as the model gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOutput {
    /// The text.
    pub text: String,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
}

/// Maps a call's result, capped at `cap` bytes.
pub(crate) fn output_of(r: &CallToolResult, cap: usize) -> McpOutput {
    let mut parts: Vec<String> = r.content.iter().map(|c| content_text(&c.raw)).collect();
    if let Some(s) = &r.structured_content {
        let json = serde_json::to_string_pretty(s).unwrap_or_else(|_| s.to_string());
        // A server that also sent it as text is not repeated.
        let compact = s.to_string();
        if !parts
            .iter()
            .any(|p| p.trim() == json.trim() || p.trim() == compact)
        {
            parts.push(format!("structured content:\n{json}"));
        }
    }
    let mut text = parts.join("\n");
    if text.is_empty() {
        text = "(the tool returned no content)".to_string();
    }
    McpOutput {
        text: cap_text(text, cap),
        is_error: r.is_error == Some(true),
    }
}

/// One content block in words.
pub(crate) fn content_text(c: &RawContent) -> String {
    match c {
        RawContent::Text(t) => t.text.clone(),
        RawContent::Image(i) => format!(
            "[an image ({}, about {} bytes); images are not shown to the model]",
            i.mime_type,
            i.data.len() / 4 * 3
        ),
        RawContent::Audio(a) => format!(
            "[audio ({}, about {} bytes); audio is not given to the model]",
            a.mime_type,
            a.data.len() / 4 * 3
        ),
        RawContent::Resource(r) => resource_text(&r.resource),
        RawContent::ResourceLink(l) => {
            let mut s = format!("[resource link: {} ({})", l.uri, l.name);
            if let Some(d) = &l.description {
                s.push_str(&format!(": {d}"));
            }
            s.push_str("; read it with read_mcp_resource]");
            s
        }
    }
}

/// A resource's contents in words: text as it is, a blob as a note.
pub(crate) fn resource_text(r: &ResourceContents) -> String {
    match r {
        ResourceContents::TextResourceContents { uri, text, .. } => format!("[resource {uri}]\n{text}"),
        ResourceContents::BlobResourceContents {
            uri, mime_type, blob, ..
        } => format!(
            "[resource {uri}: binary ({}, about {} bytes); not shown]",
            mime_type.as_deref().unwrap_or("unknown type"),
            blob.len() / 4 * 3
        ),
    }
}

/// `text` cut to at most `cap` bytes (on a character boundary), saying how much was left out.
pub(crate) fn cap_text(text: String, cap: usize) -> String {
    if text.len() <= cap {
        return text;
    }
    let mut end = cap;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[output cut: {} of {} bytes shown]",
        &text[..end],
        end,
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Content;

    #[test]
    fn text_structured_images_errors_and_the_cap() {
        let mut r = CallToolResult::success(vec![
            Content::text("hello"),
            Content::image("aGVsbG8=", "image/png"),
        ]);
        r.structured_content = Some(serde_json::json!({"sum": 3}));
        let out = output_of(&r, 10_000);
        assert!(
            out.text.starts_with("hello\n[an image (image/png"),
            "{}",
            out.text
        );
        assert!(
            out.text.contains("structured content:\n{\n  \"sum\": 3\n}"),
            "{}",
            out.text
        );
        assert!(!out.is_error);
        let e = CallToolResult::error(vec![Content::text("bad")]);
        assert_eq!(
            output_of(&e, 100),
            McpOutput {
                text: "bad".into(),
                is_error: true
            }
        );
        let big = CallToolResult::success(vec![Content::text("é".repeat(100))]);
        let cut = output_of(&big, 11).text;
        assert!(
            cut.starts_with("ééééé\n[output cut: 10 of 200 bytes shown]"),
            "{cut}"
        );
        let twice = CallToolResult::structured(serde_json::json!({"a": 1}));
        assert_eq!(output_of(&twice, 100).text.matches("\"a\"").count(), 1);
    }
}
