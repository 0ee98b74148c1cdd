-- The change log (catalog.sync), on SQLite: a row for every paper inserted, deleted, or
-- whose version, visibility or upvote count moves (the count is on its API item,
-- but moves no version: catalog.changes), written in the writing transaction; it
-- is numbered once committed (catalog.sync.seal). Loaded with the count triggers
-- (catalog.counts) once the log's table exists (migration 0025).
DROP TRIGGER IF EXISTS catalog_paper_insert_log;
DROP TRIGGER IF EXISTS catalog_paper_delete_log;
DROP TRIGGER IF EXISTS catalog_paper_update_log;
DROP TRIGGER IF EXISTS catalog_paper_votes_log;

CREATE TRIGGER catalog_paper_insert_log AFTER INSERT ON catalog_paper
BEGIN
  INSERT INTO catalog_paperchange (paper_id) VALUES (NEW.id);
END;

CREATE TRIGGER catalog_paper_delete_log AFTER DELETE ON catalog_paper
BEGIN
  INSERT INTO catalog_paperchange (paper_id) VALUES (OLD.id);
END;

CREATE TRIGGER catalog_paper_update_log
AFTER UPDATE OF changed_at, is_visible, merged_into_id ON catalog_paper
BEGIN
  INSERT INTO catalog_paperchange (paper_id) VALUES (NEW.id);
END;

CREATE TRIGGER catalog_paper_votes_log
AFTER UPDATE OF upvote_count ON catalog_paper
WHEN OLD.upvote_count IS NOT NEW.upvote_count
BEGIN
  INSERT INTO catalog_paperchange (paper_id) VALUES (NEW.id);
END;
