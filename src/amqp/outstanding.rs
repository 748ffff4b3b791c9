//! Reading publisher confirms exactly: which delivery tags each of the broker's confirms
//! settles, and whether as acked or refused.
//!
//! Why not amiquip's `ConfirmSmoother` (0.4.2): when a `multiple` confirm arrives for a tag
//! ahead of the one it expects, it emits that confirm's kind for every tag in between without
//! looking at the confirms it stashed out of order (its `src/confirm.rs`, lines 185-196), so a
//! nack that arrived out of order comes out as an ack once a later multiple ack covers it. On a
//! 3-node RabbitMQ 3.10 cluster whose leader node died, the survivor nacked publishes to the
//! dead leader's queues and 12,005 of those nacks were read as acks in one run: their events
//! left their outboxes though no queue had them.
//!
//! So the tags are tracked here: the set of outstanding tags; a confirm settles its own tag,
//! or with `multiple` every outstanding tag up to it; a tag once settled (nack included) is
//! never settled again. Pure: no broker type, so it is tested without one.

use std::collections::BTreeSet;

/// One delivery tag settled by a confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settled {
    pub tag: u64,
    /// Acked; false: nacked (refused).
    pub acked: bool,
}

/// The delivery tags of one confirm-mode channel still waiting for their confirm.
#[derive(Debug, Default)]
pub(crate) struct Outstanding {
    waiting: BTreeSet<u64>,
    /// The last tag handed out (tags count from 1 once confirms are on).
    last: u64,
}

impl Outstanding {
    /// A message published: its delivery tag, which its confirm will carry.
    pub(crate) fn publish(&mut self) -> u64 {
        self.last += 1;
        self.waiting.insert(self.last);
        self.last
    }

    /// The broker's confirm of `tag`, acked or not: the tags it settles, in order. With
    /// `multiple`, every outstanding tag up to `tag`; without, `tag` alone if outstanding. A
    /// tag settled before (or never published) is not settled again, whatever the confirm says.
    pub(crate) fn confirm(&mut self, tag: u64, multiple: bool, acked: bool) -> Vec<Settled> {
        let tags: Vec<u64> = if multiple {
            let above = match tag.checked_add(1) {
                Some(next) => self.waiting.split_off(&next),
                None => BTreeSet::new(),
            };
            std::mem::replace(&mut self.waiting, above).into_iter().collect()
        } else if self.waiting.remove(&tag) {
            vec![tag]
        } else {
            Vec::new()
        };
        tags.into_iter().map(|tag| Settled { tag, acked }).collect()
    }

    /// Tags still waiting for their confirm.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn published(n: u64) -> Outstanding {
        let mut o = Outstanding::default();
        for i in 1..=n {
            assert_eq!(o.publish(), i);
        }
        o
    }

    /// The frames a leader's death gave: tag 5 nacked out of order, then a multiple ack of 7.
    /// The smoother turned the nack into an ack; here 5 stays nacked and the ack covers the rest.
    #[test]
    fn a_nack_then_a_covering_multiple_ack_leaves_the_nacked_tag_nacked() {
        let mut o = published(8);
        assert_eq!(o.confirm(5, false, false), vec![Settled { tag: 5, acked: false }]);
        let acked: Vec<Settled> = o.confirm(7, true, true);
        assert_eq!(
            acked,
            [1, 2, 3, 4, 6, 7].map(|tag| Settled { tag, acked: true }).to_vec(),
            "the nacked tag is not settled again"
        );
        assert_eq!(o.len(), 1, "8 still waits");
        assert_eq!(
            o.confirm(5, false, true),
            vec![],
            "a repeat of a settled tag settles nothing"
        );
        assert_eq!(o.confirm(8, true, false), vec![Settled { tag: 8, acked: false }]);
        assert_eq!(o.len(), 0);
    }

    #[test]
    fn a_multiple_nack_refuses_every_outstanding_tag_up_to_it_and_no_settled_one() {
        let mut o = published(5);
        assert_eq!(o.confirm(2, false, true), vec![Settled { tag: 2, acked: true }]);
        assert_eq!(
            o.confirm(4, true, false),
            [1, 3, 4].map(|tag| Settled { tag, acked: false }).to_vec()
        );
        assert_eq!(o.confirm(9, false, true), vec![], "never published");
        assert_eq!(o.confirm(u64::MAX, true, true), vec![Settled { tag: 5, acked: true }]);
    }

    /// A confirm as the broker may send it: a tag (sometimes past the last published one),
    /// single or multiple, ack or nack.
    fn confirms(n: u64) -> impl Strategy<Value = Vec<(u64, bool, bool)>> {
        prop::collection::vec((1..=n + 2, any::<bool>(), any::<bool>()), 0..40)
    }

    proptest! {
        /// Against a model that keeps each tag's first verdict: every confirm settles exactly
        /// the tags the model settles then, each tag at most once, and a nack is never an ack.
        #[test]
        fn confirms_in_any_order_settle_each_tag_once_with_its_first_verdict(
            n in 1u64..30,
            seq in (1u64..30).prop_flat_map(confirms),
        ) {
            let mut o = published(n);
            let mut model: BTreeMap<u64, bool> = BTreeMap::new();
            for (tag, multiple, acked) in seq {
                let mut expect: Vec<Settled> = Vec::new();
                let covered: Vec<u64> = if multiple { (1..=tag.min(n)).collect() } else if tag <= n { vec![tag] } else { vec![] };
                for t in covered {
                    if let std::collections::btree_map::Entry::Vacant(e) = model.entry(t) {
                        e.insert(acked);
                        expect.push(Settled { tag: t, acked });
                    }
                }
                prop_assert_eq!(o.confirm(tag, multiple, acked), expect);
            }
            prop_assert_eq!(o.len() as u64, n - model.len() as u64);
        }
    }
}
