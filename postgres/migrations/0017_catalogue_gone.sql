-- A dataset's deletion is announced as "<id> gone", its other changes as
-- "<id>" (0011): a server's local copy of a dataset's features (mirror.go)
-- is looked for in the database only when the dataset went, not at every
-- edit (a copy of another version answers no read anyway).
CREATE OR REPLACE FUNCTION mapcommons_catalogue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		PERFORM pg_notify('mapcommons_catalogue', OLD.id::text || ' gone');
	ELSE
		PERFORM pg_notify('mapcommons_catalogue', NEW.id::text);
	END IF;
	RETURN NULL;
END
$$;
