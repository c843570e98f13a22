// SPDX-License-Identifier: GPL-2.0

//! Tests of `proto::tenant_config`: every rule of a CONFIGURE request, and the order in which
//! malformed and unsupported requests are refused.

use ccm_proto::tenant_config::{ConfigError, DeviceLimits, TenantConfig, TenantRequest};

const LIMITS: DeviceLimits = DeviceLimits {
    modes: 0b0001, // AXLE only
    mode_count: 4,
    in_order: false,
    min_slot_size: 8,
    max_slot_size: 4096,
    default_slot_size: 32,
    max_ring_slots: 1 << 16,
    max_window_bytes: 0x1000_0000,
    max_input_bytes: 1 << 20,
};

fn good() -> TenantRequest {
    TenantRequest {
        mode: 0,
        slot_size: 0,
        metadata_slots: 64,
        payload_slots: 256,
        streaming_factor: 0,
        in_order: false,
        poll_interval_ns: 500,
        input_size: 8192,
    }
}

fn check(req: TenantRequest) -> Result<TenantConfig, ConfigError> {
    TenantConfig::validate(&req, &LIMITS)
}

#[test]
fn defaults_are_filled_in_and_sizes_computed() {
    let cfg = check(good()).expect("valid request");
    assert_eq!(cfg.streaming_factor.slot_size(), 32);
    assert_eq!(cfg.streaming_factor.bytes(), 32);
    assert_eq!(cfg.metadata.capacity(), 64);
    assert_eq!(cfg.payload.capacity(), 256);
    // 64 records of 32 bytes and 256 slots of 32 bytes, each rounded up to a page.
    assert_eq!(cfg.metadata_ring_bytes, 4096);
    assert_eq!(cfg.payload_ring_bytes, 8192);
    assert_eq!(cfg.input_bytes, 8192);
}

#[test]
fn ring_capacities() {
    for bad in [0, 3, 100, (1 << 16) + 1, 1 << 17] {
        let req = TenantRequest {
            metadata_slots: bad,
            ..good()
        };
        assert_eq!(
            check(req),
            Err(ConfigError::BadRingCapacity),
            "metadata {bad}"
        );
        let req = TenantRequest {
            payload_slots: bad,
            ..good()
        };
        assert_eq!(
            check(req),
            Err(ConfigError::BadRingCapacity),
            "payload {bad}"
        );
    }
    assert!(check(TenantRequest {
        payload_slots: 1 << 16,
        ..good()
    })
    .is_ok());
}

#[test]
fn slot_sizes() {
    for bad in [4, 12, 48, 8192] {
        let req = TenantRequest {
            slot_size: bad,
            ..good()
        };
        assert_eq!(check(req), Err(ConfigError::BadSlotSize), "slot {bad}");
    }
    for ok in [8, 64, 4096] {
        assert!(
            check(TenantRequest {
                slot_size: ok,
                ..good()
            })
            .is_ok(),
            "slot {ok}"
        );
    }
}

#[test]
fn rings_must_fit_their_window() {
    let limits = DeviceLimits {
        max_window_bytes: 1 << 20,
        ..LIMITS
    };
    // 65536 slots of 32 bytes = 2 MiB > 1 MiB.
    let req = TenantRequest {
        payload_slots: 1 << 16,
        ..good()
    };
    assert_eq!(
        TenantConfig::validate(&req, &limits),
        Err(ConfigError::RingTooLarge)
    );
}

#[test]
fn streaming_factor() {
    assert_eq!(
        check(TenantRequest {
            streaming_factor: 48,
            ..good()
        }),
        Err(ConfigError::BadStreamingFactor)
    );
    // 257 slots' worth does not fit a 256-slot payload ring.
    assert_eq!(
        check(TenantRequest {
            streaming_factor: 257 * 32,
            ..good()
        }),
        Err(ConfigError::BadStreamingFactor)
    );
    let cfg = check(TenantRequest {
        streaming_factor: 256 * 32,
        ..good()
    })
    .expect("whole ring");
    assert_eq!(cfg.streaming_factor.slots(), 256);
}

#[test]
fn poll_interval_and_input_size() {
    assert_eq!(
        check(TenantRequest {
            poll_interval_ns: 1_000_000_001,
            ..good()
        }),
        Err(ConfigError::BadPollInterval)
    );
    for bad in [1, 4097, (1 << 20) + 4096] {
        let req = TenantRequest {
            input_size: bad,
            ..good()
        };
        assert_eq!(check(req), Err(ConfigError::BadInputSize), "input {bad}");
    }
    assert!(check(TenantRequest {
        input_size: 0,
        ..good()
    })
    .is_ok());
}

#[test]
fn modes() {
    assert_eq!(
        check(TenantRequest { mode: 4, ..good() }),
        Err(ConfigError::UnknownMode)
    );
    assert_eq!(
        check(TenantRequest {
            mode: u32::MAX,
            ..good()
        }),
        Err(ConfigError::UnknownMode)
    );
    let unsupported = check(TenantRequest { mode: 1, ..good() });
    assert_eq!(unsupported, Err(ConfigError::Unsupported));
    assert!(unsupported.err().is_some_and(ConfigError::is_unsupported));
    assert_eq!(
        check(TenantRequest {
            in_order: true,
            ..good()
        }),
        Err(ConfigError::Unsupported)
    );
}

#[test]
fn malformed_is_reported_before_unsupported() {
    // An unsupported mode with a bad ring is EINVAL, not EOPNOTSUPP.
    let req = TenantRequest {
        mode: 1,
        metadata_slots: 3,
        ..good()
    };
    assert_eq!(check(req), Err(ConfigError::BadRingCapacity));
    // A device with no mode at all still validates the request first.
    let none = DeviceLimits { modes: 0, ..LIMITS };
    assert_eq!(
        TenantConfig::validate(&good(), &none),
        Err(ConfigError::Unsupported)
    );
    let req = TenantRequest {
        slot_size: 12,
        ..good()
    };
    assert_eq!(
        TenantConfig::validate(&req, &none),
        Err(ConfigError::BadSlotSize)
    );
}
