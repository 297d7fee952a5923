//! What a code plan offers, decided once for every frontend: why a commit with the given choices
//! would not go ahead ([`RestorePlan::blockers`]), and, when files conflict, what each choice
//! (refuse, skip, overwrite) would do to every file ([`RestorePlan::choices`]).

use retrace_protocol::{ChoiceFile, FileAction, OnConflict, PlanBlocker, PlanChoice};

use crate::plan::{CommitOptions, RestorePlan};

impl RestorePlan {
    /// The files' reasons a commit with `opts` would not go ahead, in the order
    /// [`RestorePlan::check_commit`] checks them: conflicts under `refuse`, then a missing
    /// confirmation.
    pub fn blockers(&self, opts: CommitOptions) -> Vec<PlanBlocker> {
        let mut out = Vec::new();
        let blocking = self.blocking_conflicts();
        if blocking > 0 && (opts.on_conflict == OnConflict::Refuse || self.check_commit(opts).is_err()) {
            out.push(PlanBlocker::Conflicts { count: blocking });
        }
        if self.plan.requires_confirmation && !opts.confirm {
            out.push(PlanBlocker::ConfirmationRequired);
        }
        out
    }

    /// When files conflict, the three choices in order (`refuse`, `skip`, `overwrite`), each with
    /// what it does to every file of the plan; empty when nothing conflicts.
    pub fn choices(&self) -> Vec<PlanChoice> {
        if self.plan.conflicts.is_empty() {
            return Vec::new();
        }
        let commits = |on_conflict| {
            self.check_commit(CommitOptions {
                on_conflict,
                confirm: true,
            })
            .is_ok()
        };
        let files = |pick: &dyn Fn(&retrace_protocol::PlanFile) -> FileAction| {
            self.plan
                .files
                .iter()
                .map(|f| ChoiceFile {
                    path: f.path.clone(),
                    action: pick(f),
                })
                .collect::<Vec<_>>()
        };
        let refuse_commits = commits(OnConflict::Refuse);
        [
            PlanChoice {
                on_conflict: OnConflict::Refuse,
                label: "Restore nothing while files conflict".into(),
                commits: refuse_commits,
                files: files(&|f| match refuse_commits {
                    true => f.action,
                    false => FileAction::Skip,
                }),
                unchanged: None,
            },
            PlanChoice {
                on_conflict: OnConflict::Skip,
                label: "Skip them (keep your changes)".into(),
                commits: commits(OnConflict::Skip),
                files: files(&|f| f.action),
                unchanged: None,
            },
            PlanChoice {
                on_conflict: OnConflict::Overwrite,
                label: "Overwrite them".into(),
                commits: commits(OnConflict::Overwrite),
                files: files(&|f| f.on_overwrite.unwrap_or(f.action)),
                unchanged: None,
            },
        ]
        .into()
    }
}
