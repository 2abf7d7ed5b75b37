//! Unkeyed BLAKE2b (RFC 7693) with a digest of 1..=64 bytes, the hash Python's
//! `hashlib.blake2b(data, digest_size=n)` computes. The simulator needs it for one thing: the
//! start-jitter offsets of expanded flow groups (`config::start_offset_ns`) must be the very
//! numbers python/ccbench/scenario.py `_start_offset_ns` draws, so that a scenario gives the
//! same flows whichever side expands it.

/// Initialisation vector (RFC 7693 §2.6; the SHA-512 IV).
const IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

/// Message word schedule (RFC 7693 §2.7); rounds 10 and 11 reuse rows 0 and 1.
const SIGMA: [[usize; 16]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const BLOCK: usize = 128;

/// The mixing function G (RFC 7693 §3.1).
#[inline(always)]
fn mix(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

/// The compression function F (RFC 7693 §3.2): `t` bytes hashed so far including this block.
fn compress(h: &mut [u64; 8], block: &[u8; BLOCK], t: u128, last: bool) {
    let mut m = [0u64; 16];
    for (i, w) in m.iter_mut().enumerate() {
        *w = u64::from_le_bytes(block[8 * i..8 * i + 8].try_into().unwrap());
    }
    let mut v = [0u64; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= t as u64;
    v[13] ^= (t >> 64) as u64;
    if last {
        v[14] = !v[14];
    }
    for round in 0..12 {
        let s = &SIGMA[round % 10];
        mix(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        mix(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        mix(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        mix(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        mix(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        mix(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        mix(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        mix(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for i in 0..8 {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/// BLAKE2b of `data` without a key, `out.len()` (1..=64) bytes of digest (RFC 7693 §3.3).
pub fn blake2b(data: &[u8], out: &mut [u8]) {
    let nn = out.len();
    assert!((1..=64).contains(&nn), "BLAKE2b digest size must be 1..=64 bytes");
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ nn as u64; // parameter block: depth 1, fanout 1, no key, nn bytes
    let mut block = [0u8; BLOCK];
    // every full block but the last is compressed as it comes; the last (possibly partial or
    // empty) one is padded with zeros and flagged final
    let full = if data.is_empty() { 0 } else { (data.len() - 1) / BLOCK };
    for i in 0..full {
        block.copy_from_slice(&data[i * BLOCK..(i + 1) * BLOCK]);
        compress(&mut h, &block, ((i + 1) * BLOCK) as u128, false);
    }
    let rest = &data[full * BLOCK..];
    block = [0u8; BLOCK];
    block[..rest.len()].copy_from_slice(rest);
    compress(&mut h, &block, data.len() as u128, true);
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = (h[i / 8] >> (8 * (i % 8))) as u8;
    }
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
