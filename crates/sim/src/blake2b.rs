//! Unkeyed BLAKE2b (RFC 7693) with a digest of 1..=64 bytes, the hash Python's
//! `hashlib.blake2b(data, digest_size=n)` computes, from the RustCrypto `blake2` crate. The
//! simulator needs it for one thing: the start-jitter offsets of expanded flow groups
//! (`config::flow_groups::start_offset_ns`) must be the very numbers
//! python/ccbench/scenario/model.py `_start_offset_ns` draws, so that a scenario gives the same flows
//! whichever side expands it. The tests below pin that against hashlib's digests.
use blake2::digest::{Update, VariableOutput};
use blake2::Blake2bVar;

/// BLAKE2b of `data` without a key, `out.len()` (1..=64) bytes of digest (RFC 7693 §3.3).
pub fn blake2b(data: &[u8], out: &mut [u8]) {
    let mut h = Blake2bVar::new(out.len()).expect("BLAKE2b digest size must be 1..=64 bytes");
    h.update(data);
    h.finalize_variable(out).expect("the output has the digest size given to new");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn digest(data: &[u8], n: usize) -> String {
        let mut out = vec![0u8; n];
        blake2b(data, &mut out);
        hex(&out)
    }

    #[test]
    fn rfc7693_appendix_a_abc() {
        assert_eq!(
            digest(b"abc", 64),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1\
             7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
    }

    /// Reference digests from CPython's hashlib (the implementation scenario.py uses):
    /// `hashlib.blake2b(data, digest_size=n).hexdigest()`. They cover the empty input, the
    /// 8-byte digest of the start-jitter label, and inputs at and across one 128-byte block.
    #[test]
    fn matches_python_hashlib() {
        assert_eq!(digest(b"", 64), "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce");
        assert_eq!(digest(b"start_jitter/1/0", 8), "b244955d7e83efec");
        assert_eq!(digest(&[b'a'; 128], 8), "f06643fe9c7e18da");
        assert_eq!(digest(&[b'a'; 129], 32), "2f64744a6de0d2c0b56e64cf6e29a5aaa255010d415d51c75ccc82f73dccd865");
        assert_eq!(digest(&[b'a'; 256], 16), "2dbe331c95d600bb74dcd669f0618bd7");
    }
}
