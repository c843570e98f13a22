//! uapi-fuzz: a coverage-guided fuzzer of the cxl_ccm and reflux user
//! interfaces, run inside the test VM (see tools/vm/fuzz.sh).
mod desc;
mod gen;
mod mutate;
mod prog;
mod rng;
mod values;

fn main() {}
