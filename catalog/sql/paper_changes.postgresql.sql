-- The change log (catalog.sync), on PostgreSQL: a row for every paper inserted, deleted, or
-- whose version, visibility or upvote count moves (the count is on its API item,
-- but moves no version: catalog.changes), written in the writing transaction; it
-- is numbered once committed (catalog.sync.seal). Loaded with the count triggers
-- (catalog.counts) once the log's table exists (migration 0025).
DROP FUNCTION IF EXISTS catalog_paper_log_change() CASCADE;

CREATE FUNCTION catalog_paper_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalog_paperchange (paper_id)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
  RETURN NULL;
END $$;

CREATE TRIGGER catalog_paper_log_change
  AFTER INSERT OR DELETE OR UPDATE OF changed_at, is_visible, merged_into_id ON catalog_paper
  FOR EACH ROW EXECUTE FUNCTION catalog_paper_log_change();

CREATE TRIGGER catalog_paper_log_votes
  AFTER UPDATE OF upvote_count ON catalog_paper
  FOR EACH ROW WHEN (OLD.upvote_count IS DISTINCT FROM NEW.upvote_count)
  EXECUTE FUNCTION catalog_paper_log_change();
