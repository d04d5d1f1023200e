//! What a run ran on and when: the CPU model, the core count, the compiler,
//! and the date as ISO 8601.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// The machine a run measured.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The CPU model (`/proc/cpuinfo`'s "model name"), or "unknown".
    pub cpu: String,
    /// Cores this process may use (`available_parallelism`).
    pub cores: usize,
    /// The operating system (`std::env::consts::OS`).
    pub os: &'static str,
    /// The architecture (`std::env::consts::ARCH`).
    pub arch: &'static str,
    /// `rustc --version` of the compiler on the PATH, if there is one.
    pub rustc: Option<String>,
}

impl Machine {
    /// This machine.
    pub fn this() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Machine {
            cpu: cpu_model(&cpuinfo).unwrap_or("unknown").to_string(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
            rustc: Command::new("rustc")
                .arg("--version")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .map(|v| v.trim().to_string()),
        }
    }

    /// The `machine` object of a JSON document.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "cpu": self.cpu,
            "cores": self.cores,
            "os": self.os,
            "arch": self.arch,
            "rustc": self.rustc,
        })
    }
}

/// The first CPU model named in `/proc/cpuinfo`'s text ("model name" on
/// x86, "Model" or "Hardware" on some ARM boards).
fn cpu_model(cpuinfo: &str) -> Option<&str> {
    ["model name", "Model", "Hardware"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim())
        })
    })
}

/// Now, in UTC, as ISO 8601 to the second: `2026-11-22T05:21:07Z`.
pub fn now_iso8601() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    iso8601(secs)
}

/// Seconds since the Unix epoch as ISO 8601 in UTC.
fn iso8601(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01, by counting 400-year
/// eras of 146 097 days from 0000-03-01 (so a leap day ends each year).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso8601(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn cpu_model_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(x86), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("Hardware\t: BCM2835\n"), Some("BCM2835"));
        assert_eq!(cpu_model(""), None);
    }
}
