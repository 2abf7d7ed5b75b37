//! The `[wifi]` table: every parameter of the medium, its default and where the default comes
//! from (the table in the crate docs lists the same).
use crate::Nanos;
use serde::{Deserialize, Serialize};

/// How the station picks the MCS of each transmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RateControl {
    /// `mcs` (or the `mcs_trace` step in force) for every transmission.
    #[default]
    Fixed,
    /// A Minstrel-HT-like adaptation among the MCS of the configured stream count and width.
    Minstrel,
}

/// One 802.11n hop between two stations. Field names are the TOML keys of `[wifi]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WifiConfig {
    /// HT MCS index 0–31 (streams = mcs / 8 + 1). Default 15: 2 spatial streams, 64-QAM 5/6,
    /// the top rate of a 2×2 802.11n link (802.11-2016 Table 19-27).
    pub mcs: u8,
    /// Channel width, 20 or 40 MHz. Default 20.
    pub width_mhz: u32,
    /// Short (400 ns) guard interval. Default false (800 ns).
    pub short_gi: bool,
    /// "fixed" (default) or "minstrel".
    pub rate_control: RateControl,
    /// Steps `[time_ns, mcs]`, non-decreasing in time: from `time_ns` on, transmissions use
    /// `mcs`; before the first step, `mcs`. Default none. Only with rate_control = "fixed".
    pub mcs_trace: Option<Vec<(Nanos, u8)>>,
    /// Probability that one MPDU is received in error, independent of every other, at any MCS
    /// (a flat floor added to the SNR-derived error when `snr_db` is set). Default 0.0.
    pub mpdu_error: f64,
    /// Signal-to-noise ratio at the receiver, dB. When set, each MCS has an MPDU error rate
    /// derived from it (see `phy::snr_error`); Minstrel needs it to have anything to adapt to.
    /// Default none (no SNR-derived errors).
    pub snr_db: Option<f64>,
    /// Retransmissions of one MPDU before it is dropped (so at most `retry_limit + 1`
    /// transmissions). Default 30: ath9k's software retry limit for aggregated frames
    /// (ATH_MAX_SW_RETRIES, drivers/net/wireless/ath/ath9k/ath9k.h).
    pub retry_limit: u32,
    /// AIFSN of the access category. Default 3 (AC_BE, 802.11-2016 Table 9-137 default EDCA
    /// parameter set).
    pub aifsn: u32,
    /// CWmin, slots. Default 15 (aCWmin of the OFDM/HT PHY, AC_BE).
    pub cw_min: u32,
    /// CWmax, slots. Default 1023 (aCWmax of the OFDM/HT PHY, AC_BE).
    pub cw_max: u32,
    /// aSlotTime, ns. Default 9000 (OFDM/HT, 802.11-2016 Table 19-25).
    pub slot_ns: Nanos,
    /// aSIFSTime, ns. Default 16000 (5 GHz OFDM/HT, 802.11-2016 Table 19-25).
    pub sifs_ns: Nanos,
    /// MPDUs per A-MPDU at most. Default 64: the HT block-ack window (802.11-2016 10.24.7; ath9k
    /// also keeps every subframe inside the window, BAW_WITHIN in xmit.c).
    pub max_ampdu_frames: u32,
    /// A-MPDU length (subframes with delimiters and padding) at most, bytes. Default 65535
    /// (HT maximum A-MPDU length exponent 3, 802.11-2016 9.4.2.56.3).
    pub max_ampdu_bytes: u32,
    /// PPDU duration of one A-MPDU at most, ns. Default 4 ms (ath9k's 4 ms aggregate limit,
    /// ath_max_4ms_framelen in xmit.c; also the HT PPDU's aPPDUMaxTime in the L-SIG spoofing).
    pub max_ampdu_ns: Nanos,
    /// Send A-MPDUs with block-ack (true, default) or one MPDU per access with a normal ACK.
    pub aggregation: bool,
    /// MPDUs the sender-side station's driver/firmware holds (queued, in flight or awaiting a
    /// retry). Default 123: ath9k's per-AC limit ATH_MAX_QDEPTH = ATH_TXBUF/4 − 5.
    pub driver_queue_fwd: u32,
    /// The same for the receiver-side station (which sends the ACKs). Default 123.
    pub driver_queue_rev: u32,
    /// Legacy OFDM rate of the block-ack / ACK response, bit/s. Default 24 Mbit/s: the highest
    /// mandatory OFDM rate not above the data rate's (802.11-2016 10.7.6.5.2 control response
    /// rate; 6/12/24 Mbit/s are the mandatory rates).
    pub control_rate_bps: u64,
}

impl Default for WifiConfig {
    fn default() -> Self {
        WifiConfig {
            mcs: 15,
            width_mhz: 20,
            short_gi: false,
            rate_control: RateControl::Fixed,
            mcs_trace: None,
            mpdu_error: 0.0,
            snr_db: None,
            retry_limit: 30,
            aifsn: 3,
            cw_min: 15,
            cw_max: 1023,
            slot_ns: 9_000,
            sifs_ns: 16_000,
            max_ampdu_frames: 64,
            max_ampdu_bytes: 65_535,
            max_ampdu_ns: 4_000_000,
            aggregation: true,
            driver_queue_fwd: 123,
            driver_queue_rev: 123,
            control_rate_bps: 24_000_000,
        }
    }
}

impl WifiConfig {
    /// Check every field; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.mcs > 31 {
            return Err(format!("wifi.mcs = {}: must be an HT MCS 0–31", self.mcs));
        }
        if self.width_mhz != 20 && self.width_mhz != 40 {
            return Err(format!("wifi.width_mhz = {}: must be 20 or 40", self.width_mhz));
        }
        if let Some(steps) = &self.mcs_trace {
            if self.rate_control == RateControl::Minstrel {
                return Err("wifi.mcs_trace: only with rate_control = \"fixed\" (minstrel picks the MCS itself)".into());
            }
            let mut last = 0;
            for (i, &(t, m)) in steps.iter().enumerate() {
                if m > 31 {
                    return Err(format!("wifi.mcs_trace step {}: mcs {} is not an HT MCS 0–31", i + 1, m));
                }
                if t < last {
                    return Err(format!("wifi.mcs_trace step {}: time {} ns is before the previous step", i + 1, t));
                }
                last = t;
            }
        }
        if !(0.0..=1.0).contains(&self.mpdu_error) || self.mpdu_error.is_nan() {
            return Err(format!("wifi.mpdu_error = {}: must be a probability in [0, 1]", self.mpdu_error));
        }
        if let Some(s) = self.snr_db {
            if !s.is_finite() {
                return Err("wifi.snr_db: must be a finite number of dB".into());
            }
        }
        if self.cw_min == 0 || self.cw_max < self.cw_min {
            return Err(format!(
                "wifi.cw_min = {} / wifi.cw_max = {}: need 1 <= cw_min <= cw_max",
                self.cw_min, self.cw_max
            ));
        }
        if self.aifsn == 0 {
            return Err("wifi.aifsn: must be >= 1 (AIFS = SIFS + AIFSN slots)".into());
        }
        if self.slot_ns == 0 {
            return Err("wifi.slot_ns: must be > 0".into());
        }
        if self.max_ampdu_frames == 0 || self.max_ampdu_frames > 64 {
            return Err(format!(
                "wifi.max_ampdu_frames = {}: must be 1–64 (the block-ack window)",
                self.max_ampdu_frames
            ));
        }
        if self.max_ampdu_bytes < 1600 {
            return Err(format!(
                "wifi.max_ampdu_bytes = {}: must hold one full-size MPDU (>= 1600)",
                self.max_ampdu_bytes
            ));
        }
        if self.max_ampdu_ns == 0 {
            return Err("wifi.max_ampdu_ns: must be > 0".into());
        }
        if self.driver_queue_fwd == 0 {
            return Err("wifi.driver_queue_fwd: must be >= 1 packet".into());
        }
        if self.driver_queue_rev == 0 {
            return Err("wifi.driver_queue_rev: must be >= 1 packet".into());
        }
        if !matches!(self.control_rate_bps, 6_000_000 | 12_000_000 | 24_000_000) {
            return Err(format!(
                "wifi.control_rate_bps = {}: must be a mandatory OFDM rate (6, 12 or 24 Mbit/s)",
                self.control_rate_bps
            ));
        }
        Ok(())
    }

    /// The MCS in force at `now` for a fixed rate: the last `mcs_trace` step at or before `now`.
    pub fn fixed_mcs_at(&self, now: Nanos) -> u8 {
        match &self.mcs_trace {
            Some(steps) => match steps.partition_point(|&(t, _)| t <= now) {
                0 => self.mcs,
                i => steps[i - 1].1,
            },
            None => self.mcs,
        }
    }

    /// Driver queue depth of station `dir`.
    pub fn driver_queue(&self, dir: crate::Dir) -> u32 {
        match dir {
            crate::Dir::Fwd => self.driver_queue_fwd,
            crate::Dir::Rev => self.driver_queue_rev,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_table_is_the_default_and_keys_are_checked() {
        let d: WifiConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(d, WifiConfig::default());
        assert!(d.validate().is_ok());
        let c: WifiConfig = serde_json::from_str(r#"{"rate_control": "minstrel", "snr_db": 20.5, "mcs": 7}"#).unwrap();
        assert_eq!(c.rate_control, RateControl::Minstrel);
        let t: WifiConfig = serde_json::from_str(r#"{"mcs_trace": [[0, 15], [1000000000, 3]]}"#).unwrap();
        assert_eq!(t.fixed_mcs_at(999_999_999), 15);
        assert_eq!(t.fixed_mcs_at(1_000_000_000), 3);
        assert!(serde_json::from_str::<WifiConfig>(r#"{"mcss": 3}"#).is_err(), "unknown key refused");
        let bad = |c: WifiConfig, key: &str| {
            let e = c.validate().unwrap_err();
            assert!(e.contains(key), "{e} should name {key}");
        };
        bad(WifiConfig { mcs: 32, ..d.clone() }, "wifi.mcs");
        bad(WifiConfig { width_mhz: 80, ..d.clone() }, "wifi.width_mhz");
        bad(WifiConfig { mpdu_error: 1.5, ..d.clone() }, "wifi.mpdu_error");
        bad(WifiConfig { max_ampdu_frames: 65, ..d.clone() }, "wifi.max_ampdu_frames");
        bad(WifiConfig { driver_queue_rev: 0, ..d.clone() }, "wifi.driver_queue_rev");
        bad(WifiConfig { mcs_trace: Some(vec![(5, 1), (4, 2)]), ..d.clone() }, "wifi.mcs_trace");
        bad(
            WifiConfig { mcs_trace: Some(vec![(0, 1)]), rate_control: RateControl::Minstrel, ..d.clone() },
            "wifi.mcs_trace",
        );
        bad(WifiConfig { aifsn: 0, ..d.clone() }, "wifi.aifsn");
        bad(WifiConfig { control_rate_bps: 54_000_000, ..d }, "wifi.control_rate_bps");
    }
}
