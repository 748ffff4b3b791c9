//! Trust: signed events, provenance in the record, TLS to the stores, text that is never
//! control, least-privilege roles and accounts, and who a correction acts as.

mod accounts;
mod batch_signed;
mod inert_text;
mod keys;
mod leavers;
mod provenance;
mod roles;
mod signed;
mod signed_nights;
mod tls;
mod who_acts;
