-- The triggers that copy a paper's listed_at and visibility onto its author
-- links (catalog.models.PaperAuthor), on SQLite: a link takes its paper's as
-- it is written, and a paper whose listed_at or visibility changes passes
-- them to its links. An author's page, feed and counts then read the
-- author's visible papers newest first off the links' index alone.
--
-- VISIBLE(x) is the visible-paper condition (catalog.models.VISIBLE) on the
-- catalog_paper row x, filled in as the file is loaded (catalog.counts). The
-- file drops what it creates first.

DROP TRIGGER IF EXISTS catalog_paperauthor_from_paper_insert;
DROP TRIGGER IF EXISTS catalog_paperauthor_from_paper_update;
DROP TRIGGER IF EXISTS catalog_paper_to_author_links;

-- SQLite's triggers take one event each: the link's insert and the move of a
-- link to another paper run the same statement.
CREATE TRIGGER catalog_paperauthor_from_paper_insert AFTER INSERT ON catalog_paperauthor
BEGIN
  UPDATE catalog_paperauthor SET
    listed_at = (SELECT p.listed_at FROM catalog_paper p WHERE p.id = NEW.paper_id),
    visible = coalesce((SELECT VISIBLE(p) FROM catalog_paper p WHERE p.id = NEW.paper_id), 0)
  WHERE id = NEW.id;
END;
CREATE TRIGGER catalog_paperauthor_from_paper_update AFTER UPDATE OF paper_id ON catalog_paperauthor
BEGIN
  UPDATE catalog_paperauthor SET
    listed_at = (SELECT p.listed_at FROM catalog_paper p WHERE p.id = NEW.paper_id),
    visible = coalesce((SELECT VISIBLE(p) FROM catalog_paper p WHERE p.id = NEW.paper_id), 0)
  WHERE id = NEW.id;
END;

CREATE TRIGGER catalog_paper_to_author_links AFTER UPDATE ON catalog_paper
WHEN NEW.listed_at IS NOT OLD.listed_at OR VISIBLE(NEW) IS NOT VISIBLE(OLD)
BEGIN
  UPDATE catalog_paperauthor SET listed_at = NEW.listed_at, visible = VISIBLE(NEW)
  WHERE paper_id = NEW.id;
END;
