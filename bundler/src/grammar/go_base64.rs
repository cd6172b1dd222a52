//! Base64 the way Go's `encoding/json` reads `[]byte`: standard alphabet, padded, line breaks
//! ignored, non-zero trailing bits tolerated.

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Decodes, or `None` when the text is not base64.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    if s.contains(['\n', '\r']) {
        let cleaned: String = s.chars().filter(|c| *c != '\n' && *c != '\r').collect();
        LENIENT.decode(cleaned).ok()
    } else {
        LENIENT.decode(s).ok()
    }
}

/// Encodes with the standard padded alphabet (Go's `base64.StdEncoding`).
pub fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_and_lenience() {
        assert_eq!(super::decode(&super::encode(b"hello")).unwrap(), b"hello");
        assert_eq!(super::decode("aGVs\nbG8=").unwrap(), b"hello");
        assert!(super::decode("not base64!").is_none());
    }
}
