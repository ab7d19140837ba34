// SPDX-License-Identifier: GPL-2.0
//! When a report was made: the UTC minute a run ended, as the reports' `date` member carries it,
//! so that a page generated from a report is dated by the report and not by its generation.

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
