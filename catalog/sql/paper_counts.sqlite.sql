-- The triggers that keep the tag and category counts of visible papers
-- (catalog.counts), on SQLite. Each link table appends a part (+1 or -1) to
-- its count table per row, for the links of visible papers; a paper whose
-- visibility changes appends a part to each of its tags and categories.
--
-- VISIBLE(x) is the visible-paper condition (catalog.models.VISIBLE) on the
-- catalog_paper row x, filled in as the file is loaded. counts.recount() loads
-- this file, as the migrations that set the triggers do: it drops what it
-- creates first.

DROP TRIGGER IF EXISTS catalog_papertag_insert_counts;
DROP TRIGGER IF EXISTS catalog_papertag_delete_counts;
DROP TRIGGER IF EXISTS catalog_papertag_update_counts;
DROP TRIGGER IF EXISTS catalog_paper_categories_insert_counts;
DROP TRIGGER IF EXISTS catalog_paper_categories_delete_counts;
DROP TRIGGER IF EXISTS catalog_paper_categories_update_counts;
DROP TRIGGER IF EXISTS catalog_paper_visibility_counts;

CREATE TRIGGER catalog_papertag_insert_counts AFTER INSERT ON catalog_papertag
WHEN EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = NEW.paper_id AND VISIBLE(p))
BEGIN
  INSERT INTO catalog_tagcount (tag_id, papers) VALUES (NEW.tag_id, 1);
END;
CREATE TRIGGER catalog_papertag_delete_counts AFTER DELETE ON catalog_papertag
WHEN EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = OLD.paper_id AND VISIBLE(p))
BEGIN
  INSERT INTO catalog_tagcount (tag_id, papers) VALUES (OLD.tag_id, -1);
END;
CREATE TRIGGER catalog_papertag_update_counts AFTER UPDATE ON catalog_papertag
BEGIN
  INSERT INTO catalog_tagcount (tag_id, papers) SELECT OLD.tag_id, -1
  WHERE EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = OLD.paper_id AND VISIBLE(p));
  INSERT INTO catalog_tagcount (tag_id, papers) SELECT NEW.tag_id, 1
  WHERE EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = NEW.paper_id AND VISIBLE(p));
END;

CREATE TRIGGER catalog_paper_categories_insert_counts AFTER INSERT ON catalog_paper_categories
WHEN EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = NEW.paper_id AND VISIBLE(p))
BEGIN
  INSERT INTO catalog_categorycount (category_id, papers) VALUES (NEW.category_id, 1);
END;
CREATE TRIGGER catalog_paper_categories_delete_counts AFTER DELETE ON catalog_paper_categories
WHEN EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = OLD.paper_id AND VISIBLE(p))
BEGIN
  INSERT INTO catalog_categorycount (category_id, papers) VALUES (OLD.category_id, -1);
END;
CREATE TRIGGER catalog_paper_categories_update_counts AFTER UPDATE ON catalog_paper_categories
BEGIN
  INSERT INTO catalog_categorycount (category_id, papers) SELECT OLD.category_id, -1
  WHERE EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = OLD.paper_id AND VISIBLE(p));
  INSERT INTO catalog_categorycount (category_id, papers) SELECT NEW.category_id, 1
  WHERE EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = NEW.paper_id AND VISIBLE(p));
END;

CREATE TRIGGER catalog_paper_visibility_counts
AFTER UPDATE OF is_visible, merged_into_id ON catalog_paper
WHEN VISIBLE(OLD) IS NOT VISIBLE(NEW)
BEGIN
  INSERT INTO catalog_tagcount (tag_id, papers)
  SELECT tag_id, CASE WHEN VISIBLE(NEW) THEN 1 ELSE -1 END
  FROM catalog_papertag WHERE paper_id = NEW.id;
  INSERT INTO catalog_categorycount (category_id, papers)
  SELECT category_id, CASE WHEN VISIBLE(NEW) THEN 1 ELSE -1 END
  FROM catalog_paper_categories WHERE paper_id = NEW.id;
END;
