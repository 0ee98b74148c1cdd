-- The triggers that keep the tag and category counts of visible papers
-- (catalog.counts), on PostgreSQL. Each link table appends a part (+n or -n)
-- to its count table per statement, for the links of visible papers; a paper
-- whose visibility changes appends a part to each of its tags and categories.
--
-- VISIBLE(x) is the visible-paper condition (catalog.models.VISIBLE) on the
-- catalog_paper row x, filled in as the file is loaded. counts.recount() loads
-- this file, as the migrations that set the triggers do: it drops what it
-- creates first.

DROP FUNCTION IF EXISTS catalog_tagcount_links() CASCADE;
DROP FUNCTION IF EXISTS catalog_categorycount_links() CASCADE;
DROP FUNCTION IF EXISTS catalog_paper_visibility_counts() CASCADE;

CREATE FUNCTION catalog_tagcount_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO catalog_tagcount (tag_id, papers)
    SELECT l.tag_id, -count(*) FROM old_links l JOIN catalog_paper p ON p.id = l.paper_id
    WHERE VISIBLE(p) GROUP BY l.tag_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO catalog_tagcount (tag_id, papers)
    SELECT l.tag_id, count(*) FROM new_links l JOIN catalog_paper p ON p.id = l.paper_id
    WHERE VISIBLE(p) GROUP BY l.tag_id;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER catalog_papertag_added AFTER INSERT ON catalog_papertag
  REFERENCING NEW TABLE AS new_links
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_tagcount_links();
CREATE TRIGGER catalog_papertag_removed AFTER DELETE ON catalog_papertag
  REFERENCING OLD TABLE AS old_links
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_tagcount_links();
CREATE TRIGGER catalog_papertag_changed AFTER UPDATE ON catalog_papertag
  REFERENCING OLD TABLE AS old_links NEW TABLE AS new_links
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_tagcount_links();

CREATE FUNCTION catalog_categorycount_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO catalog_categorycount (category_id, papers)
    SELECT l.category_id, -count(*) FROM old_links l JOIN catalog_paper p ON p.id = l.paper_id
    WHERE VISIBLE(p) GROUP BY l.category_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO catalog_categorycount (category_id, papers)
    SELECT l.category_id, count(*) FROM new_links l JOIN catalog_paper p ON p.id = l.paper_id
    WHERE VISIBLE(p) GROUP BY l.category_id;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER catalog_paper_categories_added AFTER INSERT ON catalog_paper_categories
  REFERENCING NEW TABLE AS new_links
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_categorycount_links();
CREATE TRIGGER catalog_paper_categories_removed AFTER DELETE ON catalog_paper_categories
  REFERENCING OLD TABLE AS old_links
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_categorycount_links();
CREATE TRIGGER catalog_paper_categories_changed AFTER UPDATE ON catalog_paper_categories
  REFERENCING OLD TABLE AS old_links NEW TABLE AS new_links
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_categorycount_links();

CREATE FUNCTION catalog_paper_visibility_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer := CASE WHEN VISIBLE(NEW) THEN 1 ELSE -1 END;
BEGIN
  INSERT INTO catalog_tagcount (tag_id, papers)
  SELECT tag_id, delta FROM catalog_papertag WHERE paper_id = NEW.id;
  INSERT INTO catalog_categorycount (category_id, papers)
  SELECT category_id, delta FROM catalog_paper_categories WHERE paper_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER catalog_paper_visibility_counts
  AFTER UPDATE OF is_visible, merged_into_id ON catalog_paper FOR EACH ROW
  WHEN (VISIBLE(OLD) IS DISTINCT FROM VISIBLE(NEW))
  EXECUTE FUNCTION catalog_paper_visibility_counts();
