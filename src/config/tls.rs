//! TLS settings shared by the three stores: the CA file named by the standard `SSL_CERT_FILE`
//! variable (checked before any store is reached: a bad one is a usage error), and a failed
//! certificate check said in one line that names TLS and the certificate.

use std::path::PathBuf;

use crate::error::Error;

/// The variable every TLS client here reads for its trusted CA certificates.
pub(crate) const CA_FILE_VAR: &str = "SSL_CERT_FILE";

/// The CA file `SSL_CERT_FILE` names, if set: it must be a readable file of PEM certificates
/// (exit 2 otherwise, before any connection). Unset: the system's trust store.
pub(crate) fn ca_file() -> Result<Option<PathBuf>, Error> {
    let Some(raw) = std::env::var_os(CA_FILE_VAR) else {
        return Ok(None);
    };
    let path = PathBuf::from(&raw);
    let bad = |why: &str| Error::input(format!("{CA_FILE_VAR}: {}: {why}", path.display()));
    if raw.is_empty() {
        return Err(Error::input(format!(
            "{CA_FILE_VAR} is set but empty: name a file of PEM CA certificates, or unset it"
        )));
    }
    let text = std::fs::read(&path).map_err(|e| bad(&format!("cannot read it ({e})")))?;
    if !text
        .windows(b"-----BEGIN CERTIFICATE-----".len())
        .any(|w| w == b"-----BEGIN CERTIFICATE-----")
    {
        return Err(bad("holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
    }
    Ok(Some(path))
}

/// How a refused certificate's message begins: a refusal that no retry changes.
pub(crate) const REFUSED_CERTIFICATE: &str = "TLS: the server's certificate was not accepted";

/// Whether a service error's words are a refused certificate (see [`refused_certificate`]).
pub(crate) fn is_refused_certificate(detail: &str) -> bool {
    detail.starts_with(REFUSED_CERTIFICATE)
}

/// A store's connection error, in words when it is TLS refusing the server's certificate (or
/// the server refusing TLS); `None` for any other error.
pub(crate) fn refused_certificate(detail: &str) -> Option<String> {
    let lower = detail.to_ascii_lowercase();
    let certificate = ["certificate", "unknownissuer", "notvalidforname", "badsignature"]
        .iter()
        .any(|w| lower.contains(w));
    if certificate {
        return Some(format!(
            "{REFUSED_CERTIFICATE} ({detail}); the trusted CAs are {CA_FILE_VAR}'s file or the \
             system's store"
        ));
    }
    (lower.contains("tls") || lower.contains("ssl") || lower.contains("handshake"))
        .then(|| format!("TLS: the connection could not be secured ({detail})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_certificate_is_named_and_other_errors_pass() {
        let m = refused_certificate("invalid peer certificate: UnknownIssuer").unwrap();
        assert!(m.starts_with("TLS: the server's certificate was not accepted"), "{m}");
        assert!(m.contains("SSL_CERT_FILE"), "{m}");
        assert_eq!(refused_certificate("Connection refused (os error 111)"), None);
    }
}
