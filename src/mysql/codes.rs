//! MySQL's error codes that the program tells apart, in one list, with what each means to it:
//! try again (the server is briefly away or busy), refused for want of a privilege (exit 1),
//! or a database that does not exist yet (run `migrate`), or the server out of space (a
//! failing service, never a refused row). Every other code refuses the data itself (a
//! constraint, a bad value), which no retry changes.

/// EE_WRITE: a file could not be written (with errno 28: no space left on the device).
pub(crate) const FILE_WRITE: u16 = 3;
/// ER_DISK_FULL: the disk is full.
pub(crate) const DISK_FULL: u16 = 1021;
/// ER_ERROR_ON_WRITE: error writing a file (with errno 28: no space left on the device).
pub(crate) const ERROR_ON_WRITE: u16 = 1026;
/// ER_GET_ERRNO: the storage engine failed with an errno (28: no space left on the device).
pub(crate) const ENGINE_ERRNO: u16 = 1030;
/// ER_RECORD_FILE_FULL: "The table '...' is full" (the tablespace, the disk, or a MEMORY
/// table's size limit).
pub(crate) const TABLE_FULL: u16 = 1114;
/// ER_TEMP_FILE_WRITE_FAILURE: a temporary file could not be written.
pub(crate) const TEMP_FILE_WRITE: u16 = 1878;
/// ER_CON_COUNT_ERROR: too many connections; others will close.
pub(crate) const TOO_MANY_CONNECTIONS: u16 = 1040;
/// ER_OUT_OF_RESOURCES: out of memory.
pub(crate) const OUT_OF_RESOURCES: u16 = 1041;
/// ER_DBACCESS_DENIED_ERROR: the account may not use the database.
pub(crate) const DATABASE_ACCESS_DENIED: u16 = 1044;
/// ER_BAD_DB_ERROR: the database does not exist (`attendance migrate` creates it).
pub(crate) const UNKNOWN_DATABASE: u16 = 1049;
/// ER_SERVER_SHUTDOWN: the server is shutting down.
pub(crate) const SERVER_SHUTDOWN: u16 = 1053;
/// ER_TABLEACCESS_DENIED_ERROR: the account lacks a privilege on a table.
pub(crate) const TABLE_ACCESS_DENIED: u16 = 1142;
/// ER_COLUMNACCESS_DENIED_ERROR: the account lacks a privilege on a column.
pub(crate) const COLUMN_ACCESS_DENIED: u16 = 1143;
/// ER_LOCK_WAIT_TIMEOUT: another transaction held a row lock too long.
pub(crate) const LOCK_WAIT_TIMEOUT: u16 = 1205;
/// ER_LOCK_DEADLOCK: chosen as a deadlock's victim; the transaction was rolled back.
pub(crate) const DEADLOCK: u16 = 1213;
/// ER_SPECIFIC_ACCESS_DENIED_ERROR: the statement needs a global privilege (SUPER, ...).
pub(crate) const STATEMENT_DENIED: u16 = 1227;
/// ER_OPTION_PREVENTS_STATEMENT: the server runs read-only (a fail-over in progress, say).
pub(crate) const READ_ONLY: u16 = 1290;
/// ER_PROCACCESS_DENIED_ERROR: the account may not run or alter a routine.
pub(crate) const ROUTINE_ACCESS_DENIED: u16 = 1370;
/// ER_CONNECTION_KILLED (MariaDB): the connection was killed.
pub(crate) const CONNECTION_KILLED: u16 = 1927;

/// Codes that say "try again", not "this row is wrong": lock wait, deadlock, too many
/// connections, shutdown, connection killed, read-only or out of resources. (A server that has
/// gone away is no code at all but an I/O error, which is retried too.) Out of space is not
/// here: see [`OUT_OF_SPACE`].
pub(crate) const TRANSIENT: [u16; 7] = [
    LOCK_WAIT_TIMEOUT,
    DEADLOCK,
    TOO_MANY_CONNECTIONS,
    SERVER_SHUTDOWN,
    CONNECTION_KILLED,
    READ_ONLY,
    OUT_OF_RESOURCES,
];

/// Codes that always mean the server is out of space: the disk, or the table's limit.
pub(crate) const OUT_OF_SPACE: [u16; 2] = [DISK_FULL, TABLE_FULL];

/// Codes that mean out of space when their message carries errno 28 (ENOSPC).
pub(crate) const OUT_OF_SPACE_WITH_ERRNO: [u16; 4] = [FILE_WRITE, ERROR_ON_WRITE, ENGINE_ERRNO, TEMP_FILE_WRITE];

/// Codes of a refusal for want of a privilege: on the database, a table, a column, a statement
/// or a routine. Not a failing service (retrying changes nothing) but a rule: exit 1.
pub(crate) const DENIED: [u16; 5] = [
    DATABASE_ACCESS_DENIED,
    TABLE_ACCESS_DENIED,
    COLUMN_ACCESS_DENIED,
    STATEMENT_DENIED,
    ROUTINE_ACCESS_DENIED,
];
