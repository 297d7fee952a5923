//! Plan mode: while on, the model only reads and proposes; writes are refused by the controller.
//! `/plan` (or Shift+Tab on the chat) toggles it, `/plan on|off` sets it; the status line says
//! `PLAN` while it is on, following the session's `plan_mode` events.

use crate::app::App;
use crate::effect::Effect;

impl App {
    /// `/plan`, `/plan on|off`, Shift+Tab: asks to set plan mode (`None`: the other way round).
    pub(crate) fn set_plan_mode(&mut self, on: Option<bool>) -> Vec<Effect> {
        let on = on.unwrap_or(!self.status.plan_mode);
        vec![Effect::SetPlanMode(on)]
    }

    /// Plan mode is `on` now (its event, or the answer to [`Effect::SetPlanMode`]).
    pub fn show_plan_mode(&mut self, on: bool) {
        self.status.plan_mode = on;
        self.message = Some(if on {
            "plan mode is on: the model only reads and proposes a plan (Shift+Tab or /plan off to leave)"
                .to_string()
        } else {
            "plan mode is off: the model may write again".to_string()
        });
    }

    /// Whether plan mode is on.
    pub fn plan_mode(&self) -> bool {
        self.status.plan_mode
    }
}
