-- Which import made a row (rowcall.ImportMayReplace): an importer of outside
-- input (an OpenAPI document) writes its import id here and never replaces a
-- row that another import, or the owner by hand, made unless asked to. NULL
-- for rows written by hand or by a plain registry import.
ALTER TABLE directory ADD COLUMN imported_from TEXT;
