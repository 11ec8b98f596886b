-- Schema version 1 of the gpu-fabric-plugin journal. See docs/journal-format.md.
-- STRICT tables: SQLite refuses values of the wrong type instead of silently converting them,
-- so a stored hash is always a BLOB and a time always an INTEGER.

-- One row per event, seq 1, 2, 3, ... without gaps. seq is the rowid, so appends go to the end
-- of the table's B-tree and need no extra index.
CREATE TABLE events (
  seq     INTEGER PRIMARY KEY,
  time_us INTEGER NOT NULL,  -- event time, microseconds since the Unix epoch, UTC
  type    TEXT    NOT NULL,  -- event type name, e.g. "AllocationGranted"
  payload BLOB    NOT NULL,  -- opaque to the store (protobuf bytes)
  hash    BLOB    NOT NULL   -- SHA-256 chain hash, 32 bytes
) STRICT;

-- State snapshots, each bound to the event hash at its seq.
CREATE TABLE snapshots (
  seq             INTEGER PRIMARY KEY,  -- the last event included in the state
  created_time_us INTEGER NOT NULL,     -- when the snapshot was written (informational, hashed)
  payload         BLOB    NOT NULL,     -- opaque state bytes
  hash            BLOB    NOT NULL      -- SHA-256, 32 bytes
) STRICT;
