//! Little-endian integers read at an offset of a byte slice: `None` where the slice ends
//! first, never a panic.

pub(crate) fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    array(bytes, at).map(u16::from_le_bytes)
}

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    array(bytes, at).map(u32::from_le_bytes)
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    array(bytes, at).map(u64::from_le_bytes)
}

/// The `N` bytes at `at`.
fn array<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at.checked_add(N)?)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_none_past_the_end() {
        let bytes = [0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 2, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(u32_at(&bytes, 0), Some(0xba55_ed50));
        assert_eq!(u16_at(&bytes, 6), Some(16));
        assert_eq!(u64_at(&bytes, 8), Some(2));
        assert_eq!(u64_at(&bytes, 9), None);
        assert_eq!(u16_at(&bytes, usize::MAX), None);
    }
}
