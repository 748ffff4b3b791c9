//! Batch signatures: one Ed25519 signature over a Merkle tree of many records' signed messages
//! (RFC 6962's tree: leaves and nodes hashed with SHA-256 under distinct prefixes), and each
//! record's tag, which holds that signature, the record's place in the tree and its audit path,
//! so every record is checked on its own and a verifier checks the signature once per root.
//!
//! The tag is `b1.` and base64url without padding of: the signature (64 bytes), the leaf count
//! less one and the record's index (2 bytes each, big-endian), the batch's salt (16 bytes),
//! then the audit path, leaf to root ([`NODE_BYTES`] a hash). Its `.` is in no base64
//! alphabet, so it is told from every single tag (an HMAC tag, the first format's MAC, an
//! Ed25519 signature) by its prefix, never by its length.
//!
//! The tree keeps 128 bits of each SHA-256, salted per batch (randomized hashing, NIST SP
//! 800-106, as XMSS and SPHINCS+ do): the salt is keyed by the signer's private key and the
//! whole batch, so nobody can know it before the batch is signed, and a record that passes for
//! a signed one needs a second preimage (2^128 work), never a collision made in advance (2^64).
//! docs/security.md, "Batch signatures", says why and what it saves.

use base64::Engine;
use sha2::{Digest, Sha256};

/// How much of a SHA-256 hash a tree's leaves, nodes and root keep (see docs/security.md,
/// "Batch signatures", for why).
pub(crate) const NODE_BYTES: usize = 16;

/// A leaf's, a node's or the root's hash.
pub(crate) type Hash = [u8; NODE_BYTES];

/// What a verifier remembers a batch signature by: a whole SHA-256.
pub(crate) type Id = [u8; 32];

/// The first [`NODE_BYTES`] of a SHA-256.
fn kept(h: Sha256) -> Hash {
    h.finalize()[..NODE_BYTES].try_into().expect("NODE_BYTES <= 32")
}

/// What begins a batch tag.
pub(crate) const TAG_PREFIX: &str = "b1.";

/// The most leaves a batch holds: a count and an index fit 2 bytes, and a path at most 16 hashes.
pub(crate) const MAX_LEAVES: usize = 1 << 16;

/// The most leaves a signer puts in one batch: a bulk check-in's script call (at most
/// `redis::board::PUNCHES_PER_CALL`, 100) is one batch, and a tag holds at most 7 hashes.
pub(crate) const LEAVES: usize = 128;

/// What the batch's key signs: a label of its own (so a batch signature never passes for an
/// event's, an alert's or a void's, nor the reverse), the leaf count, the salt and the root.
const BATCH_LABEL: &[u8] = b"attendance-batch-v1\t";

const SIG_BYTES: usize = 64;
/// A batch's salt.
pub(crate) const SALT_BYTES: usize = 16;
pub(crate) type Salt = [u8; SALT_BYTES];
const HEAD_BYTES: usize = SIG_BYTES + 4 + SALT_BYTES;

/// A leaf: SHA-256 of 0x00, the batch's salt and the record's signed message (RFC 6962 section
/// 2.1, salted).
pub(crate) fn leaf(salt: &Salt, message: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(salt);
    h.update(message);
    kept(h)
}

/// A node: SHA-256 of 0x01 and its two children, so no node passes for a leaf.
fn node(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    kept(h)
}

/// The largest power of two below `n` (n > 1): where RFC 6962 splits a tree of `n` leaves.
fn split(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// The root of `leaves` (at least one) and each leaf's audit path, leaf to root.
pub(crate) fn tree(leaves: &[Hash]) -> (Hash, Vec<Vec<Hash>>) {
    let mut paths = vec![Vec::new(); leaves.len()];
    let root = build(leaves, &mut paths);
    (root, paths)
}

fn build(leaves: &[Hash], paths: &mut [Vec<Hash>]) -> Hash {
    if leaves.len() == 1 {
        return leaves[0];
    }
    let k = split(leaves.len());
    let (left_paths, right_paths) = paths.split_at_mut(k);
    let left = build(&leaves[..k], left_paths);
    let right = build(&leaves[k..], right_paths);
    left_paths.iter_mut().for_each(|p| p.push(right));
    right_paths.iter_mut().for_each(|p| p.push(left));
    node(&left, &right)
}

/// The root a leaf at `index` of a tree of `count` leaves reaches through `path`, or `None` if
/// the path is not exactly that leaf's (too short, too long, an index outside the tree).
pub(crate) fn root_from(leaf: Hash, index: usize, count: usize, path: &[Hash]) -> Option<Hash> {
    if index >= count {
        return None;
    }
    if count == 1 {
        return path.is_empty().then_some(leaf);
    }
    let (top, below) = path.split_last()?;
    let k = split(count);
    Some(if index < k {
        node(&root_from(leaf, index, k, below)?, top)
    } else {
        node(top, &root_from(leaf, index - k, count - k, below)?)
    })
}

/// The message a batch's key signs.
pub(crate) fn signed_message(count: usize, salt: &Salt, root: &Hash) -> Vec<u8> {
    let mut m = Vec::with_capacity(BATCH_LABEL.len() + 6 + SALT_BYTES + NODE_BYTES);
    m.extend_from_slice(BATCH_LABEL);
    m.extend_from_slice(count.to_string().as_bytes());
    m.push(b'\t');
    m.extend_from_slice(salt);
    m.extend_from_slice(root);
    m
}

/// Append one record's tag: the batch's signature, the record's place, the salt and its path.
pub(crate) fn encode_tag(
    sig: &[u8; SIG_BYTES],
    (index, count): (usize, usize),
    salt: &Salt,
    path: &[Hash],
    out: &mut String,
) {
    debug_assert!(count <= MAX_LEAVES && index < count);
    let mut raw = Vec::with_capacity(HEAD_BYTES + NODE_BYTES * path.len());
    raw.extend_from_slice(sig);
    raw.extend_from_slice(&u16::try_from(count - 1).expect("at most MAX_LEAVES").to_be_bytes());
    raw.extend_from_slice(&u16::try_from(index).expect("below MAX_LEAVES").to_be_bytes());
    raw.extend_from_slice(salt);
    path.iter().for_each(|h| raw.extend_from_slice(h));
    out.push_str(TAG_PREFIX);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode_string(&raw, out);
}

/// A batch tag taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tag {
    pub sig: [u8; SIG_BYTES],
    pub count: usize,
    pub index: usize,
    pub salt: Salt,
    pub path: Vec<Hash>,
}

/// Whether a signature field holds a batch tag (well formed or not: a malformed one is a bad
/// signature, never another format).
pub(crate) fn is_tag(sig: &str) -> bool {
    sig.starts_with(TAG_PREFIX)
}

/// A batch tag's parts, or `None` if it is not one.
pub(crate) fn decode_tag(sig: &str) -> Option<Tag> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sig.strip_prefix(TAG_PREFIX)?)
        .ok()?;
    if raw.len() < HEAD_BYTES || !(raw.len() - HEAD_BYTES).is_multiple_of(NODE_BYTES) {
        return None;
    }
    let count = usize::from(u16::from_be_bytes([raw[64], raw[65]])) + 1;
    let index = usize::from(u16::from_be_bytes([raw[66], raw[67]]));
    Some(Tag {
        sig: raw[..SIG_BYTES].try_into().expect("64 bytes"),
        count,
        index,
        salt: raw[68..HEAD_BYTES].try_into().expect("SALT_BYTES"),
        path: raw[HEAD_BYTES..]
            .chunks_exact(NODE_BYTES)
            .map(|c| c.try_into().expect("NODE_BYTES"))
            .collect(),
    })
}

/// What a verifier remembers of a batch signature it checked: the key's id, the signed message
/// and the very signature bytes (so a record is accepted by a verifier that saw its batch
/// before exactly when it would be by one that never did).
pub(crate) fn verified_id(key_id: &str, signed: &[u8], sig: &[u8; SIG_BYTES]) -> Id {
    let mut h = Sha256::new();
    h.update(key_id.as_bytes());
    h.update([0u8]);
    h.update(signed);
    h.update(sig);
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SALT: Salt = [9; SALT_BYTES];

    fn leaves(n: usize) -> Vec<Hash> {
        (0..n).map(|i| leaf(&SALT, format!("record {i}").as_bytes())).collect()
    }

    /// RFC 6962's MTH, written from its definition (section 2.1), recursively.
    fn mth(d: &[Hash]) -> Hash {
        if d.len() == 1 {
            return d[0];
        }
        let k = split(d.len());
        node(&mth(&d[..k]), &mth(&d[k..]))
    }

    #[test]
    fn every_leaf_of_trees_of_any_size_reaches_the_root_through_its_own_path_alone() {
        for n in [1, 2, 3, 5, 7, 8, 9, 31, 100, 129] {
            let l = leaves(n);
            let (root, paths) = tree(&l);
            assert_eq!(root, mth(&l), "{n} leaves");
            for (i, p) in paths.iter().enumerate() {
                assert_eq!(root_from(l[i], i, n, p), Some(root), "leaf {i} of {n}");
                // Another place, a path cut short or grown: not this root. (Another count may
                // reach it: a path names the sibling subtrees' hashes, not their sizes, which
                // is why the signed message holds the count.)
                for j in (0..n).filter(|&j| j != i) {
                    assert_ne!(root_from(l[i], j, n, p), Some(root), "leaf {i} as {j} of {n}");
                }
                if let Some((_, short)) = p.split_last() {
                    assert_ne!(root_from(l[i], i, n, short), Some(root));
                }
                let mut long = p.clone();
                long.push(root);
                assert_ne!(root_from(l[i], i, n, &long), Some(root));
                // Another record under this path: not this root.
                assert_ne!(root_from(leaf(&SALT, b"forged"), i, n, p), Some(root));
                // The same record under another salt: not this root.
                assert_ne!(
                    root_from(leaf(&[8; SALT_BYTES], format!("record {i}").as_bytes()), i, n, p),
                    Some(root)
                );
            }
            assert_eq!(root_from(l[0], n, n, &paths[0]), None, "an index outside the tree");
        }
    }

    #[test]
    fn a_single_leaf_is_its_own_root_with_an_empty_path() {
        let l = leaves(1);
        let (root, paths) = tree(&l);
        assert_eq!((root, paths), (l[0], vec![vec![]]));
        assert_eq!(root_from(l[0], 0, 1, &[]), Some(l[0]));
    }

    #[test]
    fn a_path_from_another_batch_reaches_another_root() {
        let (a, b) = (
            leaves(8),
            (8..16)
                .map(|i| leaf(&SALT, format!("record {i}").as_bytes()))
                .collect::<Vec<_>>(),
        );
        let ((root_a, _), (_, paths_b)) = (tree(&a), tree(&b));
        for i in 0..8 {
            assert_ne!(root_from(a[i], i, 8, &paths_b[i]), Some(root_a));
        }
    }

    #[test]
    fn a_leaf_never_passes_for_a_node() {
        let l = leaves(2);
        let mut joined = l[0].to_vec();
        joined.extend_from_slice(&l[1]);
        assert_ne!(leaf(&SALT, &joined), tree(&l).0);
    }

    #[test]
    fn a_tag_round_trips_and_is_told_apart_by_its_prefix() {
        let l = leaves(5);
        let (_, paths) = tree(&l);
        let mut s = String::new();
        encode_tag(&[7; 64], (3, 5), &SALT, &paths[3], &mut s);
        assert!(is_tag(&s) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)));
        let tag = decode_tag(&s).unwrap();
        assert_eq!(
            (tag.sig, tag.count, tag.index, tag.salt, &tag.path),
            ([7; 64], 5, 3, SALT, &paths[3])
        );
        assert_eq!(decode_tag(&s[..s.len() - 1]), None, "a path cut mid-hash");
        assert_eq!(decode_tag(&s[TAG_PREFIX.len()..]), None, "no prefix");
        assert!(!is_tag(&"A".repeat(86)));
    }
}
