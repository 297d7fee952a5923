//! Replaying entries into the index: every check first, then the change.

use super::{Check, HeadNode, Index, Node, Segment, TurnRec};
use crate::entry::{
    Entry, ForkEntry, HeadEvent, HeadKind, MessageEntry, NoteEntry, Role, SummaryEntry, SummaryMode,
    TurnEntry,
};
use crate::ids::{HeadId, MessageId};
use crate::view::{Message, MessageKind};

impl Index {
    /// Replays one entry; on `Err` nothing changed.
    pub(crate) fn apply(&mut self, entry: Entry) -> Check<()> {
        match entry {
            Entry::Session(_) => return Err("a second `session` header".to_string()),
            Entry::Message(e) => {
                let usage = e.usage.filter(|_| e.role == Role::Assistant);
                self.apply_message(e)?;
                self.count_last(usage);
            }
            Entry::Note(e) => self.apply_note(e)?,
            Entry::Turn(e) => {
                let turn = e.turn;
                self.apply_turn(e)?;
                if let Some(m) = &self.model {
                    self.turn_models.insert(turn, m.clone());
                }
            }
            Entry::Fork(e) => self.apply_fork(e)?,
            Entry::Select(e) => self.apply_select(e)?,
            Entry::Retire(e) => self.apply_retire(e)?,
            Entry::Summary(e) => {
                let usage = e.usage;
                self.apply_summary(e)?;
                // The request that wrote it counts in the tally; its size is no head's context.
                self.count_last(usage);
            }
            Entry::PlanMode(e) => self.plan_mode = e.on,
            Entry::Model(e) => self.model = Some(e),
        }
        self.entries += 1;
        Ok(())
    }

    /// Counts `usage`, what the server counted for the request that wrote the last node, under
    /// the model recorded last.
    fn count_last(&mut self, usage: Option<crate::entry::TokenUsage>) {
        if let Some(usage) = usage {
            self.counted.push(super::Counted {
                node: self.nodes.len() - 1,
                model: self.model.as_ref().map(|m| m.spec.clone()),
                usage,
            });
        }
    }

    fn check_new_message(&self, id: &MessageId) -> Check<()> {
        if self.by_id.contains_key(id.as_str()) {
            return Err(format!("message id `{id}` is used twice"));
        }
        Ok(())
    }

    fn check_new_head(&self, id: &HeadId, name: Option<&str>) -> Check<()> {
        if self.head_by_id.contains_key(id.as_str()) || self.names.contains_key(id.as_str()) {
            return Err(format!("head id `{id}` is used twice"));
        }
        if let Some(n) = name {
            if self.name_taken(n) {
                return Err(format!("head name `{n}` is used twice"));
            }
        }
        Ok(())
    }

    /// Checks that `parent` is the tip of head `h`.
    fn check_parent(&self, h: usize, id: &MessageId, parent: Option<&MessageId>) -> Check<()> {
        let tip = self.tip(h);
        let named = match parent {
            Some(p) => Some(self.need_msg(p)?),
            None => None,
        };
        if named != tip {
            let show =
                |m: Option<usize>| m.map_or("null".to_string(), |m| format!("`{}`", self.nodes[m].msg.id));
            return Err(format!(
                "message `{id}` names parent {} but the last message of head `{}` is {}",
                show(named),
                self.heads[h].id,
                show(tip)
            ));
        }
        Ok(())
    }

    /// Appends message node `m` (already in `nodes`) to head `h`'s own messages and path.
    fn push_own(&mut self, h: usize, m: usize) {
        let head = &mut self.heads[h];
        let pos = head.own.len();
        head.own.push(m);
        head.len += 1;
        match head.segments.last_mut() {
            Some(s) if s.head == h && s.end == pos => s.end += 1,
            _ => head.segments.push(Segment {
                head: h,
                start: pos,
                end: pos + 1,
            }),
        }
    }

    fn add_node(&mut self, h: usize, msg: Message) -> usize {
        let ix = self.nodes.len();
        self.by_id.insert(msg.id.clone(), ix);
        let pos = self.heads[h].own.len();
        self.heads[h].last_activity.clone_from(&msg.at);
        self.nodes.push(Node { msg, head: h, pos });
        ix
    }

    fn apply_message(&mut self, e: MessageEntry) -> Check<()> {
        let h = self.need_head(&e.head)?;
        self.check_new_message(&e.id)?;
        self.check_parent(h, &e.id, e.parent.as_ref())?;
        let msg = Message {
            id: e.id,
            kind: MessageKind::Message,
            role: e.role,
            content: e.content,
            tool_calls: e.tool_calls,
            tool_call_id: e.tool_call_id,
            at: e.at,
            head: e.head,
            turn: None,
            usage: e.usage,
            reasoning: e.reasoning,
            outcome: e.outcome,
        };
        let m = self.add_node(h, msg);
        self.push_own(h, m);
        Ok(())
    }

    fn apply_note(&mut self, e: NoteEntry) -> Check<()> {
        let h = self.need_head(&e.head)?;
        self.check_new_message(&e.id)?;
        self.check_parent(h, &e.id, e.parent.as_ref())?;
        let msg = Message {
            id: e.id,
            kind: MessageKind::Note,
            role: Role::System,
            content: e.content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            at: e.at,
            head: e.head,
            turn: None,
            usage: None,
            reasoning: None,
            outcome: None,
        };
        let m = self.add_node(h, msg);
        self.push_own(h, m);
        Ok(())
    }

    fn apply_turn(&mut self, e: TurnEntry) -> Check<()> {
        let h = self.need_head(&e.head)?;
        let m = self.need_msg(&e.message_id)?;
        if e.turn == u64::MAX {
            return Err(format!(
                "turn {} leaves no number for the next turn: turn numbers must be below {}",
                e.turn,
                u64::MAX
            ));
        }
        if let Some(last) = self.turns.last() {
            if e.turn <= last.turn {
                return Err(format!(
                    "turn {} comes after turn {}: turn numbers must increase",
                    e.turn, last.turn
                ));
            }
        }
        let node = &self.nodes[m];
        if node.head != h || node.msg.kind != MessageKind::Message || node.msg.role != Role::User {
            return Err(format!(
                "turn {} names `{}`, which is not a user message of head `{}`",
                e.turn, e.message_id, e.head
            ));
        }
        if let Some(t) = node.msg.turn {
            return Err(format!("message `{}` already opened turn {t}", e.message_id));
        }
        self.nodes[m].msg.turn = Some(e.turn);
        self.turns.push(TurnRec {
            turn: e.turn,
            head: h,
            message: m,
            at: e.at,
        });
        Ok(())
    }

    fn new_head(&mut self, node: HeadNode) -> usize {
        let h = self.heads.len();
        self.head_by_id.insert(node.id.clone(), h);
        if let Some(n) = &node.name {
            self.names.insert(n.clone(), h);
        }
        self.heads.push(node);
        if self.selected.is_none() {
            self.selected = Some(h);
        }
        h
    }

    fn apply_fork(&mut self, e: ForkEntry) -> Check<()> {
        self.check_new_head(&e.head, e.name.as_deref())?;
        let (parent, from, segments) = if e.kind == HeadKind::Main {
            if e.parent_head.is_some() || e.from.is_some() || !self.heads.is_empty() {
                return Err("a `main` head must be the first head, with no parent".to_string());
            }
            (None, None, Vec::new())
        } else {
            let p = match &e.parent_head {
                Some(p) => self.need_head(p)?,
                None => return Err(format!("fork `{}` has no parent_head", e.head)),
            };
            let from = match &e.from {
                Some(m) => Some(self.need_msg(m)?),
                None => None,
            };
            let segs = self.prefix(p, from).ok_or_else(|| {
                format!(
                    "fork `{}`: message `{}` is not on head `{}`",
                    e.head,
                    e.from.as_ref().map_or("", |m| m.as_str()),
                    self.heads[p].id
                )
            })?;
            (Some(p), from, segs)
        };
        let len = segments.iter().map(Segment::len).sum();
        self.new_head(HeadNode {
            id: e.head,
            kind: e.kind,
            name: e.name,
            parent_head: parent,
            fork_from: from,
            created_at: e.at.clone(),
            last_activity: e.at,
            retired: false,
            compaction: false,
            summary: None,
            own: Vec::new(),
            segments,
            len,
        });
        Ok(())
    }

    fn apply_select(&mut self, e: HeadEvent) -> Check<()> {
        let h = self.need_head(&e.head)?;
        if self.heads[h].retired {
            return Err(format!("`select` names head `{}`, which is retired", e.head));
        }
        self.selected = Some(h);
        self.heads[h].last_activity = e.at;
        Ok(())
    }

    fn apply_retire(&mut self, e: HeadEvent) -> Check<()> {
        let h = self.need_head(&e.head)?;
        if self.selected == Some(h) {
            return Err(format!(
                "`retire` names head `{}`, which is the selected head (a selected head is never retired)",
                e.head
            ));
        }
        if self.heads[h].retired {
            return Err(format!(
                "`retire` names head `{}`, which is already retired",
                e.head
            ));
        }
        self.heads[h].retired = true;
        Ok(())
    }

    fn apply_summary(&mut self, e: SummaryEntry) -> Check<()> {
        self.check_new_head(&e.head, e.name.as_deref())?;
        self.check_new_message(&e.id)?;
        let p = self.need_head(&e.parent_head)?;
        self.need_msg(&e.replaces.first)?;
        self.need_msg(&e.replaces.last)?;
        let kept = match &e.kept {
            Some(r) => {
                let (first, last) = (self.need_msg(&r.first)?, self.need_msg(&r.last)?);
                let segs = self.slice(p, first, last).ok_or_else(|| {
                    format!(
                        "summary `{}`: `{}`..`{}` is not a range of head `{}`",
                        e.head, r.first, r.last, e.parent_head
                    )
                })?;
                Some((last, segs))
            }
            None => None,
        };
        let parent = match &e.parent {
            Some(m) => Some(self.need_msg(m)?),
            None => None,
        };
        let expected = match e.mode {
            SummaryMode::From => kept.as_ref().map(|(last, _)| *last),
            SummaryMode::UpTo => None,
        };
        if parent != expected || (e.mode == SummaryMode::UpTo && kept.is_none()) {
            return Err(format!(
                "summary `{}`: `parent` and `kept` do not agree with mode `{}`",
                e.head,
                match e.mode {
                    SummaryMode::From => "from",
                    SummaryMode::UpTo => "up_to",
                }
            ));
        }
        let h = self.heads.len();
        let own = Segment {
            head: h,
            start: 0,
            end: 1,
        };
        let kept_segs = kept.map(|(_, s)| s).unwrap_or_default();
        let segments: Vec<Segment> = match e.mode {
            SummaryMode::From => kept_segs.into_iter().chain([own]).collect(),
            SummaryMode::UpTo => [own].into_iter().chain(kept_segs).collect(),
        };
        let len = segments.iter().map(Segment::len).sum();
        self.new_head(HeadNode {
            id: e.head.clone(),
            kind: HeadKind::Summary,
            name: e.name,
            parent_head: Some(p),
            fork_from: parent,
            created_at: e.at.clone(),
            last_activity: e.at.clone(),
            retired: false,
            compaction: e.compaction,
            summary: Some(e.mode),
            own: Vec::new(),
            segments,
            len,
        });
        let msg = Message {
            id: e.id,
            kind: MessageKind::Summary,
            role: e.role,
            content: e.content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            at: e.at,
            head: e.head,
            turn: None,
            usage: None,
            reasoning: None,
            outcome: None,
        };
        let m = self.add_node(h, msg);
        self.heads[h].own.push(m);
        Ok(())
    }
}
