//! CUBIC — placeholder until the full port lands.
use super::{CcSock, CongestionControl};

#[derive(Debug, Default)]
pub struct Cubic;

impl Cubic {
    pub fn new() -> Self {
        Cubic
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        ((sk.cwnd * 717) >> 10).max(2)
    }
}
