//! Unit tests of `latency`: defaults, ranges, the delay of each operation, and the budget.

use ccm_devmodel::latency::{
    Access, Charge, Cost, DelayBudget, LatencyError, LatencyModel, Operation, Param, MAX_DELAY_NS,
    MAX_PS_PER_BYTE,
};

#[test]
fn defaults_are_table_iii() {
    let m = LatencyModel::default();
    assert_eq!(m, LatencyModel::DEFAULT);
    assert_eq!(m.cxl_mem_rtt_ns(), 70);
    assert_eq!(m.cxl_io_rtt_ns(), 350);
    assert_eq!(m.dma_prep_ns(), 500);
    assert_eq!(m.dma_segment_ns(), 0);
    assert_eq!(m.dma_ps_per_byte(), 16);
    assert_eq!(m.irq_ns(), 50_000);
    assert_eq!(m.remote_poll_interval_ns(), 1_000);
    for p in Param::ALL {
        assert_eq!(m.get(p), p.default_value(), "{p}");
    }
}

#[test]
fn parameter_names_round_trip() {
    let names: Vec<&str> = Param::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        [
            "cxl_mem_rtt_ns",
            "cxl_io_rtt_ns",
            "dma_prep_ns",
            "dma_segment_ns",
            "dma_ps_per_byte",
            "irq_ns",
            "remote_poll_interval_ns"
        ]
    );
    for p in Param::ALL {
        assert_eq!(Param::from_name(p.name()), Some(p));
    }
    assert_eq!(Param::from_name("cxl_mem_rtt"), None);
}

#[test]
fn protocol_accesses() {
    let m = LatencyModel::DEFAULT;
    assert_eq!(m.cxl_mem(Access::Read), 70);
    assert_eq!(m.cxl_mem(Access::Write), 35);
    assert_eq!(m.cxl_io(Access::Read), 350);
    assert_eq!(m.cxl_io(Access::Write), 175);
    // One way rounds up.
    let odd = m.with(Param::CxlMemRtt, 71).unwrap();
    assert_eq!(odd.cxl_mem(Access::Write), 36);
    assert_eq!(m.interrupt(), 50_000);
    assert_eq!(m.remote_poll_interval(), 1_000);
}

#[test]
fn dma_request_delay() {
    let m = LatencyModel::DEFAULT;
    // 32 B: 500 prep + ceil(32 * 16 / 1000) = 1 transfer + 175 flight.
    let c = m.dma(32, 1).unwrap();
    assert_eq!(c.get(Cost::DmaPrep), 500);
    assert_eq!(c.get(Cost::DmaTransfer), 1);
    assert_eq!(c.get(Cost::CxlIo), 175);
    assert_eq!(c.get(Cost::Interrupt), 0);
    assert_eq!(c.total(), 676);
    // 4096 B in 2 segments at 10 ns per segment: 520 + ceil(65.536) = 66 + 175.
    let m2 = m.with(Param::DmaSegment, 10).unwrap();
    let c = m2.dma(4096, 2).unwrap();
    assert_eq!(
        (
            c.get(Cost::DmaPrep),
            c.get(Cost::DmaTransfer),
            c.get(Cost::CxlIo)
        ),
        (520, 66, 175)
    );
    assert_eq!(c.total(), 761);
    assert_eq!(m.dma_transfer(1000), 16);
    assert_eq!(m.dma_transfer(0), 0);
}

#[test]
fn dma_request_errors() {
    let m = LatencyModel::DEFAULT;
    assert_eq!(m.dma(0, 1), Err(LatencyError::EmptyDma));
    assert_eq!(m.dma(0, 0), Err(LatencyError::EmptyDma));
    assert_eq!(m.dma(4, 0), Err(LatencyError::BadSegmentCount));
    assert_eq!(m.dma(4, 5), Err(LatencyError::BadSegmentCount));
    assert!(m.dma(4, 4).is_ok());
    assert_eq!(
        m.charge(Operation::Dma {
            bytes: 0,
            segments: 1
        }),
        Err(LatencyError::EmptyDma)
    );
}

#[test]
fn charge_by_operation() {
    let m = LatencyModel::DEFAULT;
    let mem = m.charge(Operation::CxlMem(Access::Read)).unwrap();
    assert_eq!(mem, Charge::of(Cost::CxlMem, 70));
    assert!(mem.involves(Cost::CxlMem) && !mem.involves(Cost::CxlIo));
    assert_eq!(
        m.charge(Operation::CxlIo(Access::Write)).unwrap(),
        Charge::of(Cost::CxlIo, 175)
    );
    assert_eq!(
        m.charge(Operation::Interrupt).unwrap(),
        Charge::of(Cost::Interrupt, 50_000)
    );
    assert_eq!(
        m.charge(Operation::RemotePoll).unwrap(),
        Charge::of(Cost::RemotePoll, 1_000)
    );
    assert_eq!(
        m.charge(Operation::Dma {
            bytes: 32,
            segments: 1
        })
        .unwrap(),
        m.dma(32, 1).unwrap()
    );
}

#[test]
fn ranges_are_enforced() {
    let mut m = LatencyModel::DEFAULT;
    assert_eq!(
        m.set(Param::CxlMemRtt, MAX_DELAY_NS + 1),
        Err(LatencyError::OutOfRange {
            param: Param::CxlMemRtt,
            value: MAX_DELAY_NS + 1
        })
    );
    assert_eq!(m, LatencyModel::DEFAULT, "a refused value changes nothing");
    assert_eq!(m.set(Param::CxlMemRtt, MAX_DELAY_NS), Ok(()));
    assert_eq!(m.cxl_mem_rtt_ns(), MAX_DELAY_NS);
    assert!(m.set(Param::RemotePollInterval, 0).is_err());
    assert_eq!(m.set(Param::RemotePollInterval, 1), Ok(()));
    assert!(m.set(Param::DmaPsPerByte, MAX_PS_PER_BYTE + 1).is_err());
    assert_eq!(m.set(Param::DmaPsPerByte, MAX_PS_PER_BYTE), Ok(()));
    assert_eq!(m.set(Param::Irq, 0), Ok(()));
    assert_eq!(Param::RemotePollInterval.range(), (1, 100_000_000));
    assert_eq!(
        LatencyModel::validate(Param::DmaPrep, 7),
        Ok(7),
        "validate returns the value"
    );
    assert_eq!(
        LatencyError::OutOfRange {
            param: Param::Irq,
            value: 200_000_000
        }
        .to_string(),
        "irq_ns = 200000000 is outside 0..=100000000"
    );
}

#[test]
fn zero_model_charges_nothing() {
    let z = LatencyModel::ZERO;
    assert_eq!(z.remote_poll_interval_ns(), 1);
    assert_eq!(z.dma(4096, 3).unwrap().total(), 0);
    assert_eq!(z.cxl_io(Access::Read), 0);
    assert!(z.dma(4096, 3).unwrap().involves(Cost::DmaPrep));
}

#[test]
fn extreme_parameters_do_not_overflow() {
    let mut m = LatencyModel::ZERO;
    for p in Param::ALL {
        m.set(p, p.range().1).unwrap();
    }
    let c = m.dma(u32::MAX, u32::MAX).unwrap();
    let max = MAX_DELAY_NS;
    assert_eq!(c.get(Cost::DmaPrep), max + u64::from(u32::MAX) * max);
    assert_eq!(
        c.get(Cost::DmaTransfer),
        u64::from(u32::MAX) * MAX_PS_PER_BYTE / 1000
    );
    assert_eq!(c.get(Cost::CxlIo), max / 2);
    assert_eq!(
        c.total(),
        max + u64::from(u32::MAX) * max + u64::from(u32::MAX) * 1000 + max / 2
    );
}

#[test]
fn budget_sums_per_category() {
    let m = LatencyModel::DEFAULT;
    let mut b = DelayBudget::new();
    assert_eq!(b, DelayBudget::default());
    b.add(&m.dma(32, 1).unwrap());
    b.add(&m.dma(32, 1).unwrap());
    b.add(&m.charge(Operation::Interrupt).unwrap());
    b.record(Cost::CreditWait, 1234);
    assert_eq!(b.ns(Cost::DmaPrep), 1000);
    assert_eq!(b.events(Cost::DmaPrep), 2);
    assert_eq!(b.ns(Cost::DmaTransfer), 2);
    assert_eq!(b.ns(Cost::CxlIo), 350);
    assert_eq!(b.events(Cost::CxlIo), 2);
    assert_eq!(b.ns(Cost::Interrupt), 50_000);
    assert_eq!(b.events(Cost::Interrupt), 1);
    assert_eq!(b.ns(Cost::CreditWait), 1234);
    assert_eq!(b.events(Cost::CxlMem), 0);
    assert_eq!(b.total_ns(), 1000 + 2 + 350 + 50_000 + 1234);
    // Zero-delay operations still count as events.
    b.add(
        &LatencyModel::ZERO
            .charge(Operation::CxlMem(Access::Read))
            .unwrap(),
    );
    assert_eq!((b.ns(Cost::CxlMem), b.events(Cost::CxlMem)), (0, 1));
    // Saturation instead of wrapping.
    b.record(Cost::RemotePoll, u64::MAX);
    b.record(Cost::RemotePoll, 5);
    assert_eq!(b.ns(Cost::RemotePoll), u64::MAX);
    assert_eq!(b.total_ns(), u64::MAX);
    let names: Vec<&str> = Cost::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "cxl_mem",
            "cxl_io",
            "dma_prep",
            "dma_transfer",
            "interrupt",
            "remote_poll",
            "credit_wait"
        ]
    );
}

#[test]
fn dilation_scales_every_cost() {
    let m = LatencyModel::DEFAULT;
    // 1000 is no dilation.
    assert_eq!(m.dilated(1000), Ok(m));
    // 12.5x: every parameter, rounded to the nearest unit.
    let d = m.dilated(12_500).unwrap();
    for p in Param::ALL {
        assert_eq!(d.get(p), (p.default_value() * 12_500 + 500) / 1000, "{p}");
    }
    assert_eq!(d.irq_ns(), 625_000);
    assert_eq!(d.cxl_mem_rtt_ns(), 875);
    // A product out of range names the parameter and leaves nothing half-scaled behind.
    let big = LatencyModel::DEFAULT
        .with(Param::Irq, MAX_DELAY_NS)
        .unwrap();
    assert_eq!(
        big.dilated(2000),
        Err(LatencyError::OutOfRange {
            param: Param::Irq,
            value: 2 * MAX_DELAY_NS
        })
    );
    // The largest factor cannot overflow: out of range, or in range and exact.
    assert!(LatencyModel::DEFAULT.dilated(u32::MAX).is_err());
    let z = LatencyModel::ZERO.dilated(u32::MAX).unwrap();
    assert_eq!(
        z.remote_poll_interval_ns(),
        (u64::from(u32::MAX) + 500) / 1000
    );
}
