//! The session view's events applied to items as JSON, by the controller's rules
//! (`retrace_control::ItemList`), for tests that read the wire (`exec --json`, SSE).

use serde_json::{json, Value};

/// Applies one event (`{"type": …}`) to `items`: `item_started` / `item_updated` /
/// `item_completed` replace the item with the same id or add it at the end, `item_removed` removes
/// it, `assistant_delta` / `reasoning_delta` extend the text of the item they name.
pub fn apply_item_event(items: &mut Vec<Value>, e: &Value) {
    match e["type"].as_str().unwrap_or("") {
        "item_started" | "item_updated" | "item_completed" => {
            let item = e["item"].clone();
            match items.iter_mut().find(|i| i["id"] == item["id"]) {
                Some(slot) => *slot = item,
                None => items.push(item),
            }
        }
        "item_removed" => items.retain(|i| i["id"] != e["item_id"]),
        kind @ ("assistant_delta" | "reasoning_delta") => {
            let field = if kind == "assistant_delta" {
                "text"
            } else {
                "reasoning"
            };
            if let Some(i) = items.iter_mut().find(|i| i["id"] == e["item_id"]) {
                let now = i[field].as_str().unwrap_or("").to_string();
                i[field] = json!(format!("{now}{}", e["text"].as_str().unwrap_or("")));
            }
        }
        _ => {}
    }
}
