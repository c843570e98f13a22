// SPDX-License-Identifier: GPL-2.0

//! Page-cache page tags: what they record, and when a page is stale.

use reflux_proto::page_tag::{is_stale, PageTag, TAGGED};

fn tag(actors: &[(u8, u64, bool)]) -> u32 {
    let mut t = PageTag::default();
    for &(id, epoch, dev) in actors {
        t.add(id, epoch, dev);
    }
    t.encode()
}

#[test]
fn a_tag_round_trips() {
    let raw = tag(&[(2, 6, true), (1, 4, false)]);
    assert_ne!(raw & TAGGED, 0);
    assert_eq!(
        PageTag::decode(raw),
        Some(PageTag {
            actors: 0b110,
            on_device: 0b100,
            epochs: 10
        })
    );
    assert_eq!(PageTag::decode(0), None);
    // A pipeline with no stage still gets a tag.
    assert_eq!(PageTag::decode(tag(&[])), Some(PageTag::default()));
}

#[test]
fn a_migration_makes_the_pages_of_its_actor_stale() {
    let before = tag(&[(2, 0, true), (1, 0, true)]);
    // Starting (odd epoch), and done (even, on the other side).
    let during = tag(&[(2, 1, true), (1, 0, true)]);
    let after = tag(&[(2, 2, false), (1, 0, true)]);
    assert!(is_stale(before, during));
    assert!(is_stale(before, after));
    assert!(is_stale(during, after));
    assert!(!is_stale(after, after));
    // Another actor's migration does not touch pages it does not cover.
    let other = tag(&[(3, 0, true)]);
    assert!(!is_stale(other, tag(&[(3, 0, true)])));
}

#[test]
fn untagged_pages_are_never_stale() {
    assert!(!is_stale(0, tag(&[(2, 8, true)])));
}

#[test]
fn a_changed_pipeline_makes_pages_stale() {
    assert!(is_stale(tag(&[(2, 4, true)]), tag(&[(3, 4, true)])));
    assert!(is_stale(tag(&[(2, 4, true)]), tag(&[])));
}

#[test]
fn the_epoch_sum_wraps_without_touching_the_other_fields() {
    let mut t = PageTag::default();
    t.add(1, (1 << 17) - 1, false);
    t.add(2, 3, true);
    let d = PageTag::decode(t.encode()).unwrap();
    assert_eq!((d.actors, d.on_device, d.epochs), (0b110, 0b100, 2));
    // Large ids count in the sum only.
    let mut t = PageTag::default();
    t.add(9, 2, true);
    assert_eq!(
        PageTag::decode(t.encode()),
        Some(PageTag {
            actors: 0,
            on_device: 0,
            epochs: 2
        })
    );
}
