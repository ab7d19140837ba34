// SPDX-License-Identifier: GPL-2.0
//! A PNG's text chunks (`tEXt`, a keyword and a Latin-1 value): written into a screenshot so that
//! it says which page it was taken from, and read back to check it.

use anyhow::{anyhow, ensure};

const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// The CRC-32 (IEEE) PNG's chunks end with, over the chunk's type and data.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            // Shifts, and folds the polynomial in where the bit shifted out was set.
            crc = (crc >> 1) ^ (0xedb8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// The chunks of `png`: (type, data), in order; an error for what is not a whole PNG.
fn chunks(png: &[u8]) -> anyhow::Result<Vec<([u8; 4], &[u8])>> {
    ensure!(png.starts_with(SIGNATURE), "not a PNG file");
    let mut chunks = Vec::new();
    let mut at = SIGNATURE.len();
    while at < png.len() {
        let cut_short = || anyhow!("a PNG chunk is cut short at byte {at}");
        let header = png.get(at..at + 8).ok_or_else(cut_short)?;
        let length = u32::from_be_bytes(header[..4].try_into()?) as usize;
        let kind: [u8; 4] = header[4..].try_into()?;
        let data = png.get(at + 8..at + 8 + length).ok_or_else(cut_short)?;
        let end = at + 12 + length;
        ensure!(png.len() >= end, "a PNG chunk's CRC is missing");
        chunks.push((kind, data));
        at = end;
    }
    Ok(chunks)
}

/// `png` with a `tEXt` chunk `keyword` = `value` right after its header, replacing one of the
/// same keyword.
pub fn with_text(png: &[u8], keyword: &str, value: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = SIGNATURE.to_vec();
    let mut text = keyword.as_bytes().to_vec();
    text.push(0);
    text.extend_from_slice(value.as_bytes());
    for (index, (kind, data)) in chunks(png)?.into_iter().enumerate() {
        if &kind == b"tEXt" && data.starts_with(keyword.as_bytes()) {
            continue;
        }
        push_chunk(&mut out, kind, data);
        if index == 0 {
            push_chunk(&mut out, *b"tEXt", &text);
        }
    }
    Ok(out)
}

fn push_chunk(out: &mut Vec<u8>, kind: [u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(&kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// The value of `png`'s `tEXt` chunk `keyword`, if it has one.
pub fn text(png: &[u8], keyword: &str) -> anyhow::Result<Option<String>> {
    let mut texts = chunks(png)?.into_iter().filter(|(kind, _)| kind == b"tEXt");
    let value =
        texts.find_map(|(_, data)| data.strip_prefix(keyword.as_bytes())?.strip_prefix(b"\0"));
    Ok(value.map(|value| String::from_utf8_lossy(value).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1 x 1 PNG with a text chunk added reads it back, keeps its pixels' chunks and their
    /// CRCs, and a second value replaces the first.
    #[test]
    fn a_text_chunk_is_written_and_read_back() {
        let mut png = SIGNATURE.to_vec();
        push_chunk(&mut png, *b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
        push_chunk(
            &mut png,
            *b"IDAT",
            &[0x78, 0x9c, 0x63, 0x60, 0, 0, 0, 2, 0, 1],
        );
        push_chunk(&mut png, *b"IEND", &[]);
        // The IEND chunk's CRC every PNG ends with.
        assert_eq!(&png[png.len() - 4..], &[0xae, 0x42, 0x60, 0x82]);
        assert_eq!(text(&png, "page").unwrap(), None);
        let stamped = with_text(&png, "page", "abc").unwrap();
        assert_eq!(text(&stamped, "page").unwrap().as_deref(), Some("abc"));
        let again = with_text(&stamped, "page", "def").unwrap();
        assert_eq!(text(&again, "page").unwrap().as_deref(), Some("def"));
        assert_eq!(again.len(), stamped.len());
        assert!(text(b"GIF89a", "page").is_err());
    }
}
