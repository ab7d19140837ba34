// SPDX-License-Identifier: GPL-2.0
//! When a report was made: the UTC minute a run ended, as the reports' `date` member carries it,
//! so that a page generated from a report is dated by the report and not by its generation.

use crate::json::Value;

/// The current UTC time to the minute, `2026-12-04 02:40 UTC`.
pub fn utc_now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    utc_minute(seconds)
}

/// `seconds` since the Unix epoch as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_minute(seconds: u64) -> String {
    let days = seconds / 86_400;
    let in_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        in_day / 3600,
        in_day % 3600 / 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// `report` (a JSON object) with a `date` member saying it was made now; reading a report
/// ignores members it does not know, so older readers take it as before.
pub fn stamp(mut report: Value) -> Value {
    if let Value::Object(members) = &mut report {
        members.insert("date".into(), Value::String(utc_now()));
    }
    report
}

/// The latest `date` of the reports at `paths` (a merge is as recent as its newest shard), if
/// any has one; the fixed-width form sorts as text.
pub fn latest_of(paths: &[std::path::PathBuf]) -> Option<String> {
    paths
        .iter()
        .filter_map(|path| {
            let text = crate::files::read_text(path, 64 << 20).ok()?;
            Some(of_report(&crate::json::parse(&text).ok()?)?.to_string())
        })
        .max()
}

/// `report` with `date` as its `date` member, where there is one.
pub fn with_date(mut report: Value, date: Option<&str>) -> Value {
    if let (Value::Object(members), Some(date)) = (&mut report, date) {
        members.insert("date".into(), Value::String(date.to_string()));
    }
    report
}

/// The `date` member of a report, if it has one.
pub fn of_report(report: &Value) -> Option<&str> {
    report.get("date").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::utc_minute;

    #[test]
    fn dates_match_known_instants() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        // 2000-02-29 12:34:56 UTC, a leap day of a century leap year.
        assert_eq!(utc_minute(951_827_696), "2000-02-29 12:34 UTC");
        // 2026-12-04 02:40:00 UTC.
        assert_eq!(utc_minute(1_796_352_000), "2026-12-04 02:40 UTC");
    }
}
