use elect_core::{Epoch, NodeId, Prefer, Rank};

use super::*;
use crate::bully;

#[test]
fn the_binary_form_reads_back_as_written() {
    let timers = [
        AnyTimer::Bully(bully::Timer::OkDeadline),
        AnyTimer::ChangRoberts(()),
        AnyTimer::Invitation(crate::invitation::Timer::Check),
    ];
    for timer in timers {
        let bytes = postcard::to_allocvec(&timer).unwrap();
        assert_eq!(postcard::from_bytes::<AnyTimer>(&bytes).unwrap(), timer);
    }
    for durable in [AnyDurable::Bully(Epoch::of(3, NodeId(1))), AnyDurable::Invitation(7), AnyDurable::Franklin(())] {
        let bytes = postcard::to_allocvec(&durable).unwrap();
        assert_eq!(postcard::from_bytes::<AnyDurable>(&bytes).unwrap(), durable);
    }
    let msg = AnyMsg::Bully(bully::Msg::Ok { epoch: Epoch::of(2, NodeId(5)) });
    assert_eq!(postcard::from_bytes::<AnyMsg>(&postcard::to_allocvec(&msg).unwrap()).unwrap(), msg);
}

#[test]
fn each_kind_is_named_at_its_index() {
    let kinds = AnyMsg::kinds();
    for msg in [
        AnyMsg::Bully(bully::Msg::Ok { epoch: Epoch::of(2, NodeId(5)) }),
        AnyMsg::Bully(bully::Msg::Election { epoch: Epoch::of(2, NodeId(5)) }),
        AnyMsg::ChangRoberts(crate::chang_roberts::Msg::Elected { leader: Rank::new(Prefer::Highest, 0, NodeId(4)) }),
    ] {
        assert_eq!(kinds[msg.kind_index()], msg.kind(), "{msg:?}");
    }
    let bully_kinds = <bully::Msg as Message>::kinds();
    assert_eq!(&kinds[..bully_kinds.len()], &bully_kinds[..], "the first algorithm's kinds come first");
}
