//! What two ranks say to each other before a point-to-point message's data moves: the
//! sender's header (element type, count, its preferred piece size, the sequence number
//! its data and the answer travel under) and the receiver's answer (go, with the piece
//! size both use, or a refusal saying what it expected). A mismatch is therefore an error
//! on both ranks, found before any data is written.

use crate::core::element::DType;

const MAGIC: u32 = u32::from_le_bytes(*b"LCS1");

/// Bytes of a header and of an answer on the wire.
pub(super) const HEADER_BYTES: usize = 32;

/// The sender's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    /// The element type's index in [`DType::ALL`].
    pub dtype: u8,
    /// Elements sent.
    pub count: u64,
    /// The tag of this message's data and answer (the sender's sequence number).
    pub seq: u32,
    /// The largest piece the sender wants (its staging chunk, or a whole message).
    pub piece: u64,
}

/// The receiver's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    /// Send, in pieces of this many bytes.
    Go { piece: u64 },
    /// Not this message: what the receiver expected.
    Refuse { dtype: u8, count: u64 },
}

/// The index of `dtype` in [`DType::ALL`].
pub(super) fn dtype_code(dtype: DType) -> u8 {
    DType::ALL.iter().position(|&d| d == dtype).unwrap_or(0) as u8
}

/// The name of the element type with index `code`.
pub(super) fn dtype_name(code: u8) -> &'static str {
    DType::ALL
        .get(code as usize)
        .map_or("an unknown type", |d| d.name())
}

impl Header {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES);
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&[self.dtype, 0, 0, 0]);
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.piece.to_le_bytes());
        out
    }

    /// The header in `bytes`, or `None` when they are not one (a message of the
    /// program's own on the same communicator and tag).
    pub(super) fn decode(bytes: &[u8]) -> Option<Header> {
        if bytes.len() != HEADER_BYTES || u32::from_le_bytes(bytes[0..4].try_into().ok()?) != MAGIC
        {
            return None;
        }
        Some(Header {
            dtype: bytes[4],
            count: u64::from_le_bytes(bytes[8..16].try_into().ok()?),
            seq: u32::from_le_bytes(bytes[16..20].try_into().ok()?),
            piece: u64::from_le_bytes(bytes[24..32].try_into().ok()?),
        })
    }
}

impl Answer {
    pub(super) fn encode(&self) -> Vec<u8> {
        let (kind, dtype, value) = match *self {
            Answer::Go { piece } => (1u8, 0u8, piece),
            Answer::Refuse { dtype, count } => (2, dtype, count),
        };
        let mut out = Vec::with_capacity(HEADER_BYTES);
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&[kind, dtype, 0, 0]);
        out.extend_from_slice(&value.to_le_bytes());
        out.resize(HEADER_BYTES, 0);
        out
    }

    pub(super) fn decode(bytes: &[u8]) -> Option<Answer> {
        if bytes.len() != HEADER_BYTES || u32::from_le_bytes(bytes[0..4].try_into().ok()?) != MAGIC
        {
            return None;
        }
        let value = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
        match bytes[4] {
            1 => Some(Answer::Go { piece: value }),
            2 => Some(Answer::Refuse {
                dtype: bytes[5],
                count: value,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_answers_survive_the_wire() {
        let h = Header {
            dtype: dtype_code(DType::F64),
            count: 1 << 40,
            seq: 32766,
            piece: 4 << 20,
        };
        assert_eq!(Header::decode(&h.encode()), Some(h));
        for a in [
            Answer::Go { piece: 1 << 30 },
            Answer::Refuse { dtype: 3, count: 7 },
        ] {
            assert_eq!(Answer::decode(&a.encode()), Some(a));
        }
        assert_eq!(Header::decode(&[0; HEADER_BYTES]), None);
        assert_eq!(dtype_name(dtype_code(DType::U16)), "u16");
    }
}
