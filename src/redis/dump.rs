//! A fresh board in the serialized form `RESTORE` takes: a compact (listpack) hash of empty
//! fields, framed as Redis's DUMP payload (RDB type, RDB version, CRC-64).
//!
//! Why: an HSET of a department's 200 new fields into a listpack compares each field with every
//! one before it (about 0.3 ms of Redis a board, 1.5 s of its time for 5,000 boards), where a
//! RESTORE of the same hash built here only checks the frame (about 5 µs a board). The hash that
//! lands is the one HSET would have built, byte for byte.

/// RDB type of a hash encoded as a listpack (Redis 7.0 and later).
const RDB_TYPE_HASH_LISTPACK: u8 = 16;
/// The RDB version of Redis 7.0: every later server accepts it; an older one refuses the
/// payload, and the layout falls back to HSET (see `restore.lua`).
const RDB_VERSION: u16 = 10;
/// A listpack's element count is a u16; at this value it means "count them".
const LP_COUNT_UNKNOWN: usize = 65_535;
/// The longest field a 12-bit listpack string holds (ids are at most 32 bytes anyway).
const MAX_FIELD: usize = 4_095;

/// The DUMP payload of a hash whose fields are `fields`, each with an empty value; `None`
/// when one of them is not a plain string to a listpack (empty, too long, or a decimal integer,
/// which Redis stores as a number): the caller lays that board out with HSET instead. The
/// fields must be distinct (a board's employee ids are).
pub(crate) fn empty_hash<S: AsRef<str>>(fields: &[S]) -> Option<Vec<u8>> {
    let mut lp = vec![0u8; 6];
    for f in fields {
        let f = f.as_ref().as_bytes();
        if f.is_empty() || f.len() > MAX_FIELD || stored_as_integer(f) {
            return None;
        }
        push_string(&mut lp, f);
        // The empty value: a 6-bit string of length 0, and its back-length.
        lp.extend_from_slice(&[0x80, 0x01]);
    }
    lp.push(0xFF);
    let total = u32::try_from(lp.len()).ok()?;
    lp[..4].copy_from_slice(&total.to_le_bytes());
    let count = (fields.len() * 2).min(LP_COUNT_UNKNOWN) as u16;
    lp[4..6].copy_from_slice(&count.to_le_bytes());

    let mut out = Vec::with_capacity(lp.len() + 16);
    out.push(RDB_TYPE_HASH_LISTPACK);
    push_rdb_length(&mut out, lp.len());
    out.extend_from_slice(&lp);
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Some(out)
}

/// Whether a listpack would keep these bytes as an integer (`lpStringToInt64`): a canonical
/// decimal that fits an i64 (no sign but '-', no leading zero, "-0" is a string).
fn stored_as_integer(s: &[u8]) -> bool {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<i64>().ok().map(|v| v.to_string() == t))
        .unwrap_or(false)
}

/// A listpack string entry: its encoding, the bytes, and its back-length (the entry's size,
/// seven bits a byte, read from the end).
fn push_string(lp: &mut Vec<u8>, s: &[u8]) {
    let header = if s.len() < 64 {
        lp.push(0x80 | s.len() as u8);
        1
    } else {
        lp.extend_from_slice(&[0xE0 | (s.len() >> 8) as u8, s.len() as u8]);
        2
    };
    lp.extend_from_slice(s);
    let entry = header + s.len();
    if entry <= 127 {
        lp.push(entry as u8);
    } else {
        lp.extend_from_slice(&[(entry >> 7) as u8, (entry & 127) as u8 | 128]);
    }
}

/// An RDB length: 6 bits, 14 bits big-endian, or a marker and 32 bits big-endian.
fn push_rdb_length(out: &mut Vec<u8>, n: usize) {
    if n < 64 {
        out.push(n as u8);
    } else if n < 16_384 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// CRC-64 as Redis computes it over a DUMP payload ("Jones": reflected polynomial
/// 0xad93d23594c935a9, initial value 0, no final xor).
fn crc64(data: &[u8]) -> u64 {
    static TABLE: [u64; 256] = crc64_table();
    data.iter().fold(0u64, |crc, &b| {
        TABLE[((crc ^ u64::from(b)) & 0xFF) as usize] ^ (crc >> 8)
    })
}

const fn crc64_table() -> [u64; 256] {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            bit += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_redis_crc64() {
        // The check value of Redis's own crc64 test.
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn a_board_of_three_is_framed_as_redis_frames_it() {
        let p = empty_hash(&["E0000000", "E0000001", "E0000002"]).unwrap();
        assert_eq!(p[0], RDB_TYPE_HASH_LISTPACK);
        // One-byte RDB length of the listpack, then its header: total bytes, 6 elements.
        assert_eq!(p[1] as usize, p.len() - 1 - 1 - 2 - 8);
        assert_eq!(&p[2..8], &[p[1], 0, 0, 0, 6, 0]);
        // The first field: a 6-bit string of 8 bytes, its back-length 9; the empty value.
        assert_eq!(&p[8..9], &[0x88]);
        assert_eq!(&p[9..17], b"E0000000");
        assert_eq!(&p[17..20], &[9, 0x80, 0x01]);
        assert_eq!(p[p.len() - 11], 0xFF);
        assert_eq!(&p[p.len() - 10..p.len() - 8], &[10, 0]);
        let crc = crc64(&p[..p.len() - 8]);
        assert_eq!(&p[p.len() - 8..], &crc.to_le_bytes());
    }

    #[test]
    fn ids_a_listpack_keeps_as_numbers_are_left_to_hset() {
        assert!(empty_hash(&["E1", "123"]).is_none());
        assert!(empty_hash(&["-5"]).is_none());
        assert!(empty_hash(&[""]).is_none());
        for s in ["0123", "-0", "+5", "12a", "E-1", "99999999999999999999"] {
            assert!(empty_hash(&[s]).is_some(), "{s}");
        }
    }

    #[test]
    fn long_fields_take_two_byte_headers_and_back_lengths() {
        let long = "x".repeat(200);
        let p = empty_hash(&[long.as_str()]).unwrap();
        // The RDB length takes two bytes here; the listpack starts after it.
        let lp = &p[3..];
        assert_eq!(&lp[6..8], &[0xE0, 200]);
        assert_eq!(&lp[208..210], &[1, (202 & 127) as u8 | 128]);
    }
}
