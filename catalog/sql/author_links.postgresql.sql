-- The triggers that copy a paper's listed_at and visibility onto its author
-- links (catalog.models.PaperAuthor), on PostgreSQL: a link takes its paper's
-- as it is written, and a paper whose listed_at or visibility changes passes
-- them to its links. An author's page, feed and counts then read the
-- author's visible papers newest first off the links' index alone.
--
-- VISIBLE(x) is the visible-paper condition (catalog.models.VISIBLE) on the
-- catalog_paper row x, filled in as the file is loaded (catalog.counts). The
-- file drops what it creates first.

DROP FUNCTION IF EXISTS catalog_paperauthor_from_paper() CASCADE;
DROP FUNCTION IF EXISTS catalog_paper_to_author_links() CASCADE;

CREATE FUNCTION catalog_paperauthor_from_paper() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT p.listed_at, VISIBLE(p) INTO NEW.listed_at, NEW.visible
  FROM catalog_paper p WHERE p.id = NEW.paper_id;
  NEW.visible := coalesce(NEW.visible, false);
  RETURN NEW;
END $$;

CREATE TRIGGER catalog_paperauthor_from_paper BEFORE INSERT OR UPDATE OF paper_id
  ON catalog_paperauthor
  FOR EACH ROW EXECUTE FUNCTION catalog_paperauthor_from_paper();

CREATE FUNCTION catalog_paper_to_author_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalog_paperauthor SET listed_at = NEW.listed_at, visible = VISIBLE(NEW)
  WHERE paper_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER catalog_paper_to_author_links AFTER UPDATE ON catalog_paper
  FOR EACH ROW
  WHEN (OLD.listed_at IS DISTINCT FROM NEW.listed_at OR VISIBLE(OLD) IS DISTINCT FROM VISIBLE(NEW))
  EXECUTE FUNCTION catalog_paper_to_author_links();
