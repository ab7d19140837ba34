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

/// Fails unless `text` is a minute as [`utc_minute`] writes it, a real one (`2026-02-30` is
/// not): a report's date is read from a file that anyone may have written, and pages show it.
pub fn check_utc_minute(text: &str) -> anyhow::Result<()> {
    let fields: Option<[u64; 5]> = (|| {
        let (date, time) = text.strip_suffix(" UTC")?.split_once(' ')?;
        let mut parts = date.split('-').chain(time.split(':'));
        let mut fields = [0; 5];
        for (field, width) in fields.iter_mut().zip([4, 2, 2, 2, 2]) {
            let part = parts.next()?;
            let digits = part.len() == width && part.bytes().all(|byte| byte.is_ascii_digit());
            *field = part.parse().ok().filter(|_| digits)?;
        }
        parts.next().is_none().then_some(fields)
    })();
    let real = fields.is_some_and(|[year, month, day, hour, minute]| {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        (1..=12).contains(&month) && (1..=days).contains(&day) && hour < 24 && minute < 60
    });
    anyhow::ensure!(
        real,
        "the date `{}` is not a UTC minute such as `2026-12-04 03:48 UTC`",
        crate::util::output::escape(text)
    );
    Ok(())
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
    // The shifted year starts in March.
    let month = (shifted_month + 2) % 12 + 1;
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::{check_utc_minute, utc_minute};

    #[test]
    fn dates_match_known_instants() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        // 2000-02-29 12:34:56 UTC, a leap day of a century leap year.
        assert_eq!(utc_minute(951_827_696), "2000-02-29 12:34 UTC");
        // 2026-12-04 02:40:00 UTC.
        assert_eq!(utc_minute(1_796_352_000), "2026-12-04 02:40 UTC");
    }

    #[test]
    fn only_real_minutes_are_dates() {
        for good in [
            "2026-12-04 02:40 UTC",
            "2000-02-29 23:59 UTC",
            "1970-01-01 00:00 UTC",
        ] {
            check_utc_minute(good).unwrap();
        }
        for bad in [
            "9999-99-99 99:99 UTC<script>",
            "2026-02-29 12:00 UTC",
            "1900-02-29 12:00 UTC",
            "2026-12-04 24:00 UTC",
            "2026-12-04 02:40",
            "2026-12-4 02:40 UTC",
            "+026-12-04 02:40 UTC",
            "2026-12-04 02:40:00 UTC",
        ] {
            let error = check_utc_minute(bad).unwrap_err().to_string();
            assert!(error.starts_with("the date `"), "{bad}: {error}");
        }
    }
}
