//! uapi-fuzz: a coverage-guided fuzzer of the cxl_ccm and reflux user
//! interfaces, run inside the test VM (see tools/vm/fuzz.sh).
mod access;
mod calls;
mod desc;
mod exec;
mod gen;
mod kcov;
mod kmsg;
mod minimize;
mod mutate;
mod prog;
mod repro;
mod rng;
mod sys;
mod target;
mod values;

fn main() {}
