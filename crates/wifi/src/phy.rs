//! The HT (802.11n) PHY: MCS rates, PPDU airtime, frame sizes, and the SNR → error model.
//!
//! Sources: 802.11-2016 clause 19 (HT PHY): Table 19-27..19-30 (MCS parameters, N_DBPS),
//! 19.4.3 eq. 19-89/19-90 (TXTIME of an HT-mixed PPDU), Table 19-25 (timing), clause 17 (OFDM
//! PHY TXTIME for the legacy control response), 9.3.1.9 (BlockAck frame), 9.7 (A-MPDU format).
use crate::Nanos;

/// Data bits per OFDM symbol of one spatial stream, MCS 0–7, 20 MHz (Table 19-27).
const NDBPS_20: [u32; 8] = [26, 52, 78, 104, 156, 208, 234, 260];
/// The same at 40 MHz (Table 19-28).
const NDBPS_40: [u32; 8] = [54, 108, 162, 216, 324, 432, 486, 540];

/// One HT transmission mode: MCS, width and guard interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    pub mcs: u8,
    pub width_mhz: u32,
    pub short_gi: bool,
}

impl Mode {
    pub fn streams(&self) -> u32 {
        self.mcs as u32 / 8 + 1
    }
    /// Data bits per symbol (equal modulation on every stream, MCS 0–31).
    pub fn ndbps(&self) -> u32 {
        let per_stream = if self.width_mhz == 40 { NDBPS_40 } else { NDBPS_20 };
        per_stream[(self.mcs % 8) as usize] * self.streams()
    }
    /// Symbol duration, ns: 4 µs, or 3.6 µs with the short guard interval.
    pub fn symbol_ns(&self) -> Nanos {
        if self.short_gi {
            3_600
        } else {
            4_000
        }
    }
    /// PHY data rate, bit/s (e.g. MCS 15, 20 MHz, long GI: 130 Mbit/s).
    pub fn rate_bps(&self) -> u64 {
        self.ndbps() as u64 * 1_000_000_000 / self.symbol_ns()
    }
    /// BCC encoders: one per 300 Mbit/s (802.11-2016 19.3.11.5; tables 19-27..30 give N_ES).
    fn encoders(&self) -> u64 {
        let sgi_rate = self.ndbps() as u64 * 1_000_000_000 / 3_600;
        sgi_rate.div_ceil(300_000_000).max(1)
    }
    /// HT-mixed preamble: L-STF 8 + L-LTF 8 + L-SIG 4 + HT-SIG 8 + HT-STF 4 + 4 per HT-LTF µs
    /// (N_LTF = 1, 2, 4, 4 for 1–4 streams; Table 19-13).
    pub fn preamble_ns(&self) -> Nanos {
        let n_ltf = match self.streams() {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        (8 + 8 + 4 + 8 + 4 + 4 * n_ltf) * 1_000
    }
    /// Airtime of an HT-mixed PPDU carrying `psdu_bytes` (eq. 19-89/19-90: 16 service bits,
    /// 6 tail bits per encoder; with the short GI the data part is rounded up to 4 µs).
    pub fn ppdu_ns(&self, psdu_bytes: u64) -> Nanos {
        let bits = 16 + 8 * psdu_bytes + 6 * self.encoders();
        let n_sym = bits.div_ceil(self.ndbps() as u64);
        let data = if self.short_gi { (n_sym * 3_600).div_ceil(4_000) * 4_000 } else { n_sym * 4_000 };
        self.preamble_ns() + data
    }
}

/// Airtime of a legacy OFDM (clause 17) frame of `bytes` at `rate_bps` (6/12/24 Mbit/s):
/// 16 µs preamble + 4 µs SIGNAL + 4 µs symbols carrying 16 service + 8·bytes + 6 tail bits.
pub fn legacy_ns(rate_bps: u64, bytes: u64) -> Nanos {
    let ndbps = rate_bps * 4 / 1_000_000; // bits per 4 µs symbol
    let n_sym = (16 + 8 * bytes + 6).div_ceil(ndbps);
    20_000 + 4_000 * n_sym
}

/// Compressed BlockAck frame: FC 2 + duration 2 + RA 6 + TA 6 + BA control 2 + SSC 2 +
/// bitmap 8 + FCS 4 = 32 bytes (802.11-2016 9.3.1.9).
pub const BLOCK_ACK_BYTES: u64 = 32;
/// ACK frame: FC 2 + duration 2 + RA 6 + FCS 4 = 14 bytes (9.3.1.4).
pub const ACK_BYTES: u64 = 14;
/// Bytes an MPDU adds to the IP packet: QoS data MAC header 26 (9.3.2.1, three addresses) +
/// LLC/SNAP 8 (RFC 1042 encapsulation) + FCS 4.
pub const MPDU_OVERHEAD: u64 = 26 + 8 + 4;
/// MPDU delimiter in front of each A-MPDU subframe (9.7.1; ath9k ATH_AGGR_DELIM_SZ).
pub const DELIMITER: u64 = 4;

/// MPDU length of an IP packet of `ip_len` bytes.
pub fn mpdu_bytes(ip_len: u32) -> u64 {
    ip_len as u64 + MPDU_OVERHEAD
}

/// Length of an A-MPDU subframe: delimiter + MPDU, padded to a multiple of 4 bytes (the last
/// subframe's padding is counted too, a ≤ 3-byte overestimate per aggregate).
pub fn subframe_bytes(ip_len: u32) -> u64 {
    (DELIMITER + mpdu_bytes(ip_len)).div_ceil(4) * 4
}

/// SNR (dB) at which an MCS has a 10 % error rate on a 4096-byte PSDU: the minimum input
/// sensitivity of 802.11-2016 Table 19-23 (−82, −79, −77, −74, −70, −66, −65, −64 dBm for
/// MCS 0–7 at 20 MHz; the same per stream for MCS 8–31; +3 dB at 40 MHz) above the noise
/// floor the table assumes (−174 dBm/Hz + 10·log10(bandwidth) + 10 dB noise figure + 5 dB
/// implementation margin = −86 dBm at 20 MHz). The noise floor scales with the width as the
/// sensitivity does, so the SNR threshold does not depend on the width. With N spatial
/// streams the transmit power is split N ways, so each stream needs 10·log10(N) dB more total
/// SNR (a model choice: the table lists the same sensitivity for every stream count).
pub fn snr_threshold_db(mcs: u8) -> f64 {
    const SENS_20: [f64; 8] = [-82.0, -79.0, -77.0, -74.0, -70.0, -66.0, -65.0, -64.0];
    let noise_20 = -174.0 + 10.0 * (20e6f64).log10() + 10.0 + 5.0;
    let streams = (mcs / 8 + 1) as f64;
    SENS_20[(mcs % 8) as usize] - noise_20 + 10.0 * streams.log10()
}

/// Steepness of the error-rate waterfall, per dB: a logistic curve through 10 % at the
/// threshold falling to ~1 % 1.2 dB above it, the shape of coded-OFDM PER curves in AWGN (a
/// model choice, not a standard value).
const WATERFALL_PER_DB: f64 = 2.0;

/// MPDU error probability of an MPDU of `mpdu_bytes` at `mcs` and `snr_db`: the logistic
/// waterfall fixed at 10 % for 4096 bytes at [`snr_threshold_db`], scaled to the MPDU length
/// assuming independent bit errors (1 − (1 − p)^(len/4096)).
pub fn snr_error(mcs: u8, snr_db: f64, mpdu_bytes: u64) -> f64 {
    // logistic p = 1 / (1 + exp(a (snr − s50))) with p(threshold) = 0.1 → s50 = thr − ln 9 / a.
    let s50 = snr_threshold_db(mcs) - (9.0f64).ln() / WATERFALL_PER_DB;
    let p4096 = 1.0 / (1.0 + (WATERFALL_PER_DB * (snr_db - s50)).exp());
    -((mpdu_bytes as f64 / 4096.0) * (-p4096).ln_1p()).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_table_matches_the_standard() {
        // 802.11-2016 Tables 19-27/19-28: MCS 7 65 / 72.2 Mbit/s, MCS 15 130 / 144.4, MCS 15 at
        // 40 MHz 270 / 300, MCS 0 6.5.
        let m = |mcs, w, sgi| Mode { mcs, width_mhz: w, short_gi: sgi }.rate_bps();
        assert_eq!(m(0, 20, false), 6_500_000);
        assert_eq!(m(7, 20, false), 65_000_000);
        assert_eq!(m(7, 20, true), 72_222_222);
        assert_eq!(m(15, 20, false), 130_000_000);
        assert_eq!(m(15, 40, false), 270_000_000);
        assert_eq!(m(15, 40, true), 300_000_000);
        assert_eq!(m(31, 40, true), 600_000_000);
    }

    #[test]
    fn airtimes() {
        let mode = Mode { mcs: 15, width_mhz: 20, short_gi: false };
        assert_eq!(mode.preamble_ns(), 40_000);
        // 1 byte: 16 + 8 + 6 = 30 bits -> 1 symbol.
        assert_eq!(mode.ppdu_ns(1), 44_000);
        // BlockAck at 24 Mbit/s: 16 + 256 + 6 = 278 bits / 96 -> 3 symbols: 32 µs.
        assert_eq!(legacy_ns(24_000_000, BLOCK_ACK_BYTES), 32_000);
        // ACK at 24 Mbit/s: 134 bits -> 2 symbols: 28 µs (the usual 802.11a ACK time).
        assert_eq!(legacy_ns(24_000_000, ACK_BYTES), 28_000);
        // ACK at 6 Mbit/s: 134 bits / 24 -> 6 symbols: 44 µs.
        assert_eq!(legacy_ns(6_000_000, ACK_BYTES), 44_000);
        assert_eq!(subframe_bytes(1500), 1544);
    }

    #[test]
    fn snr_errors_fall_with_snr_and_rise_with_mcs() {
        assert!((snr_error(0, snr_threshold_db(0), 4096) - 0.1).abs() < 1e-9);
        assert!(snr_error(7, 12.0, 1538) > 0.99);
        assert!(snr_error(0, 20.0, 1538) < 1e-6);
        for m in 0..7 {
            assert!(snr_error(m, 22.0, 1538) <= snr_error(m + 1, 22.0, 1538));
        }
    }
}
