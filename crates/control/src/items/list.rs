//! [`ItemList`]: a session's items as a frontend holds them: a snapshot's, then changed by the
//! events numbered after it. Every Rust frontend applies events through it, so they all show the
//! same thing; the web page does the same in its own code, by the same rules.

use retrace_protocol::{Event, Item, ItemBody};

/// What applying an event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The item with this id was added or changed.
    Item(String),
    /// The item with this id was removed.
    Removed(String),
    /// The event changes which items there are (another head is selected, a rewind, an undo, a
    /// compaction): take a new snapshot.
    Reload,
    /// Nothing shown changed.
    Nothing,
}

/// A session's items, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemList {
    items: Vec<Item>,
}

impl ItemList {
    /// The items of a snapshot.
    pub fn new(items: Vec<Item>) -> ItemList {
        ItemList { items }
    }

    /// The items, in order.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The item with this id.
    pub fn get(&self, id: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.id == id)
    }

    /// Applies one event published after the snapshot.
    pub fn apply(&mut self, event: &Event) -> Applied {
        match event {
            Event::ItemStarted { item } | Event::ItemUpdated { item } | Event::ItemCompleted { item } => {
                self.put(item.clone());
                Applied::Item(item.id.clone())
            }
            Event::ItemRemoved { item_id } => {
                self.items.retain(|i| &i.id != item_id);
                Applied::Removed(item_id.clone())
            }
            Event::AssistantDelta {
                text,
                item_id: Some(id),
            } => self.extend(id, text, false),
            Event::ReasoningDelta {
                text,
                item_id: Some(id),
            } => self.extend(id, text, true),
            Event::HeadChanged { .. }
            | Event::Rewound { .. }
            | Event::Undone { .. }
            | Event::Redone { .. }
            | Event::Compacted { .. } => Applied::Reload,
            _ => Applied::Nothing,
        }
    }

    /// Replaces the item with the same id, or adds it at the end.
    fn put(&mut self, item: Item) {
        match self.items.iter_mut().find(|i| i.id == item.id) {
            Some(slot) => *slot = item,
            None => self.items.push(item),
        }
    }

    fn extend(&mut self, id: &str, more: &str, reasoning: bool) -> Applied {
        let Some(item) = self.items.iter_mut().find(|i| i.id == id) else {
            return Applied::Nothing;
        };
        let ItemBody::AssistantText {
            text,
            reasoning: thought,
        } = &mut item.body
        else {
            return Applied::Nothing;
        };
        match reasoning {
            true => thought.get_or_insert_with(String::new).push_str(more),
            false => text.push_str(more),
        }
        Applied::Item(id.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(id: &str, t: &str) -> Item {
        Item {
            id: id.into(),
            turn: Some(0),
            body: ItemBody::AssistantText {
                text: t.into(),
                reasoning: None,
            },
        }
    }

    #[test]
    fn deltas_extend_by_id_and_a_completed_item_replaces_the_streamed_one() {
        let mut list = ItemList::default();
        list.apply(&Event::ItemStarted { item: text("a", "") });
        list.apply(&Event::AssistantDelta {
            text: "hel".into(),
            item_id: Some("a".into()),
        });
        list.apply(&Event::ReasoningDelta {
            text: "hm".into(),
            item_id: Some("a".into()),
        });
        assert_eq!(
            list.get("a").map(|i| &i.body),
            Some(&ItemBody::AssistantText {
                text: "hel".into(),
                reasoning: Some("hm".into())
            })
        );
        list.apply(&Event::ItemCompleted {
            item: text("a", "hello"),
        });
        assert_eq!(list.items(), &[text("a", "hello")]);
        assert_eq!(
            list.apply(&Event::ItemRemoved { item_id: "a".into() }),
            Applied::Removed("a".into())
        );
        assert!(list.items().is_empty());
    }

    #[test]
    fn an_item_started_twice_is_shown_once() {
        let mut list = ItemList::new(vec![text("a", "x")]);
        list.apply(&Event::ItemStarted { item: text("a", "x") });
        assert_eq!(list.items().len(), 1);
    }
}
