import type { Migration } from './migration.ts'

/** Schema changes, applied in order; the database's user_version counts those applied. Append, never edit. */
export const sqliteMigrations: readonly Migration[] = [
  {
    name: 'keys',
    sql: `
  CREATE TABLE meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  INSERT INTO meta (name, value) VALUES ('keys_version', '0');

  CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    plan TEXT NOT NULL DEFAULT 'core',
    settings TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );

  CREATE TRIGGER api_keys_insert AFTER INSERT ON api_keys BEGIN
    UPDATE meta SET value = value + 1 WHERE name = 'keys_version';
  END;
  CREATE TRIGGER api_keys_update AFTER UPDATE ON api_keys BEGIN
    UPDATE meta SET value = value + 1 WHERE name = 'keys_version';
  END;
  CREATE TRIGGER api_keys_delete AFTER DELETE ON api_keys BEGIN
    UPDATE meta SET value = value + 1 WHERE name = 'keys_version';
  END;
  `,
  },
  {
    name: 'accounts and usage ledger',
    sql: `
  CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL,
    daily_credits INTEGER,
    credits_per_second INTEGER,
    created_at INTEGER NOT NULL
  );
  INSERT INTO accounts (id, name, plan, created_at) SELECT id, 'account-' || id, plan, created_at FROM api_keys;
  ALTER TABLE api_keys ADD COLUMN account_id INTEGER REFERENCES accounts (id);
  UPDATE api_keys SET account_id = id;
  ALTER TABLE api_keys DROP COLUMN plan;
  CREATE INDEX api_keys_account ON api_keys (account_id);
  CREATE TRIGGER accounts_update AFTER UPDATE ON accounts BEGIN
    UPDATE meta SET value = value + 1 WHERE name = 'keys_version';
  END;

  -- credits per subject ('account:<id>' or 'key:<id>') per UTC day
  CREATE TABLE usage_daily (
    subject TEXT NOT NULL,
    day TEXT NOT NULL,
    credits INTEGER NOT NULL,
    PRIMARY KEY (subject, day)
  );

  -- calls and credits per key, network, method and UTC hour ('2026-11-22T13')
  CREATE TABLE usage_hourly (
    key_id INTEGER NOT NULL,
    network TEXT NOT NULL,
    method TEXT NOT NULL,
    hour TEXT NOT NULL,
    calls INTEGER NOT NULL,
    credits INTEGER NOT NULL,
    failover_calls INTEGER NOT NULL,
    PRIMARY KEY (key_id, network, method, hour)
  );
  CREATE INDEX usage_hourly_hour ON usage_hourly (hour);
  `,
  },
  {
    name: 'fee history',
    sql: `
  -- the gas API's fee history, per chain: base fee, gas used ratio, priority fees at 0/10/20/30/100%
  CREATE TABLE fee_history (
    chain_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    base_fee TEXT NOT NULL,
    gas_used_ratio REAL NOT NULL,
    rewards TEXT NOT NULL,
    PRIMARY KEY (chain_id, number)
  ) WITHOUT ROWID;

  -- hashes of the heads the indexer saw, to tell a reorg
  CREATE TABLE fee_heads (
    chain_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (chain_id, number)
  ) WITHOUT ROWID;
  `,
  },
  {
    name: 'usage batches',
    sql: `
  -- usage kept in a spool file at a stop while the database was away, added once: each batch's id is
  -- recorded in the transaction that adds its usage, so a batch replayed twice counts once
  CREATE TABLE usage_batches (
    id TEXT PRIMARY KEY,
    added_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  -- names this ledger in spool files: a spool is replayed into the database it was meant for only
  INSERT INTO meta (name, value) VALUES ('ledger_id', lower(hex(randomblob(16))));
  `,
  },
  {
    name: 'account tokens',
    sql: `
  -- the tokens key holders sign in to their account with (the account API): only each token's
  -- hash is kept (hmac-sha256, as key secrets); an account has at most one token in use
  CREATE TABLE account_tokens (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE UNIQUE INDEX account_tokens_in_use ON account_tokens (account_id) WHERE revoked_at IS NULL;
  `,
  },
  {
    name: 'request log',
    sql: `
  -- the request log key holders read (docs/accounts.md): a sample of calls and every error and
  -- refused call, per account; pruned by age and by rows per account. Time in ms since the epoch
  CREATE TABLE request_log (
    id INTEGER PRIMARY KEY,
    time_ms INTEGER NOT NULL,
    account_id INTEGER NOT NULL,
    key_id INTEGER NOT NULL,
    network TEXT NOT NULL,
    method TEXT NOT NULL,
    outcome TEXT NOT NULL,
    status INTEGER NOT NULL,
    code INTEGER,
    error TEXT,
    reason TEXT,
    credits INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    cache_hit INTEGER NOT NULL,
    upstream TEXT,
    client_address TEXT,
    user_agent TEXT,
    params TEXT,
    answer TEXT
  );
  CREATE INDEX request_log_account_time ON request_log (account_id, time_ms, id);
  CREATE INDEX request_log_time ON request_log (time_ms);
  `,
  },
  {
    name: 'usage alerts',
    sql: `
  -- an account's usage alerts (webhook): where they go, at which shares of the daily credits, in
  -- which format, and the signing secret sealed (AES-256-GCM under a key derived from the database's
  -- secret hash key: alertSecret.ts)
  CREATE TABLE alert_settings (
    account_id INTEGER PRIMARY KEY REFERENCES accounts (id),
    webhook_url TEXT NOT NULL,
    thresholds TEXT NOT NULL,
    format TEXT NOT NULL,
    sealed_secret TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  -- each alert event once: the unique constraint decides which instance made it (key_id 0: the
  -- account's own credits; threshold 0: a rate refusal), and the row is its delivery's log
  CREATE TABLE alert_events (
    id TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL,
    key_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    threshold INTEGER NOT NULL,
    day TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status TEXT,
    last_attempt_at INTEGER,
    next_attempt_at INTEGER,
    claimed_until INTEGER NOT NULL DEFAULT 0,
    delivered_at INTEGER,
    gave_up_at INTEGER,
    UNIQUE (account_id, key_id, kind, threshold, day)
  );
  CREATE INDEX alert_events_due ON alert_events (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
  CREATE INDEX alert_events_account ON alert_events (account_id, created_at);
  CREATE INDEX alert_events_created ON alert_events (created_at);
  `,
  },
  {
    name: 'usage per instance',
    sql: `
  -- of usage_daily, what each credit bank instance wrote (its id: CreditBank.instanceId): a seed of
  -- the shared balances tells each instance what of its usage it holds; kept for today and yesterday
  CREATE TABLE usage_instance_daily (
    day TEXT NOT NULL,
    subject TEXT NOT NULL,
    instance TEXT NOT NULL,
    credits INTEGER NOT NULL,
    PRIMARY KEY (day, subject, instance)
  );
  `,
  },
]
