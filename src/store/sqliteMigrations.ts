/** Schema changes, applied in order; the database's user_version counts those applied. Append, never edit. */
export const sqliteMigrations: readonly string[] = [
  `
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
]
