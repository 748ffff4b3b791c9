-- The registry of kiosk keys (docs/security.md, "Keys"): each kiosk signs its events with an
-- Ed25519 private key it alone holds; the registry holds the public half, whether the key may
-- replay offline punches, and from when it is revoked. Consumers read Redis's copy of it and
-- hold no secret. Changed by the owner's account alone (grants), every change audited.
CREATE TABLE IF NOT EXISTS signing_keys (
    key_id        VARCHAR(64)  NOT NULL PRIMARY KEY,
    algorithm     ENUM('ed25519') NOT NULL DEFAULT 'ed25519',
    -- base64 of the 32-byte public key
    public_key    VARCHAR(64)  NOT NULL,
    replay        BOOLEAN      NOT NULL DEFAULT FALSE,
    -- UTC; the MySQL account and the operating-system account that added it
    added_at      DATETIME(3)  NOT NULL,
    added_by      VARCHAR(300) NOT NULL,
    added_os_user VARCHAR(64)  NOT NULL,
    -- UTC: events signed (recorded_at) at or after it are refused; NULL: not revoked
    revoked_at    DATETIME(3)  NULL,
    revoked_by    VARCHAR(300) NULL,
    revoke_reason VARCHAR(500) NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every change to the registry: who (MySQL account, OS account), when (MySQL's clock, UTC), what.
CREATE TABLE IF NOT EXISTS signing_key_audit (
    id       BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    key_id   VARCHAR(64)  NOT NULL,
    action   ENUM('add', 'revoke') NOT NULL,
    db_user  VARCHAR(300) NOT NULL,
    os_user  VARCHAR(64)  NOT NULL,
    at       DATETIME(3)  NOT NULL,
    detail   VARCHAR(700) NOT NULL,
    KEY (key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
