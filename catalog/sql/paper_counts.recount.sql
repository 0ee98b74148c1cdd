-- Every tag's and category's count of visible papers, counted again from the
-- links (catalog.counts.recount), on PostgreSQL and SQLite alike: one part
-- each. VISIBLE(x) is the visible-paper condition on the catalog_paper row x.

DELETE FROM catalog_tagcount;
INSERT INTO catalog_tagcount (tag_id, papers)
SELECT l.tag_id, count(*) FROM catalog_papertag l JOIN catalog_paper p ON p.id = l.paper_id
WHERE VISIBLE(p) GROUP BY l.tag_id;

DELETE FROM catalog_categorycount;
INSERT INTO catalog_categorycount (category_id, papers)
SELECT l.category_id, count(*) FROM catalog_paper_categories l JOIN catalog_paper p ON p.id = l.paper_id
WHERE VISIBLE(p) GROUP BY l.category_id;
