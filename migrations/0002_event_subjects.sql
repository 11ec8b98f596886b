-- Schema version 2 of the gpu-fabric-plugin journal: indexes for `journal history` filters.
-- See docs/journal-format.md. Everything here is derived data: the hash chain does not cover it,
-- and `journal verify` checks it against the events.

-- Each distinct subject tag once ("p:3", "d:0000:1b:00.0"), so index rows carry a small integer.
CREATE TABLE subjects (
  id  INTEGER PRIMARY KEY,
  tag TEXT    NOT NULL UNIQUE
) STRICT;

-- Which events are about which subject, written in the same transaction as the event. The event
-- time is copied in so `--partition N --since T` reads only the subject's rows.
CREATE TABLE event_subjects (
  subject_id INTEGER NOT NULL,  -- subjects.id
  seq        INTEGER NOT NULL,  -- events.seq
  time_us    INTEGER NOT NULL,  -- events.time_us
  PRIMARY KEY (subject_id, seq)
) STRICT, WITHOUT ROWID;

-- `--since T` without a subject.
CREATE INDEX events_by_time ON events(time_us);

-- Facts about the file itself. subjects_from_seq: the first seq whose subjects are recorded;
-- events before it (written by a schema-1 binary) have none and are matched by a scan.
CREATE TABLE journal_meta (
  key   TEXT    PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT;
INSERT INTO journal_meta(key, value)
  SELECT 'subjects_from_seq', coalesce(max(seq), 0) + 1 FROM events;
