-- Every change of a dataset's row, by any statement of any server (or
-- of no server), is announced on the channel mapcommons_catalogue with
-- the dataset's id, when its transaction commits: the servers' catalogue
-- caches drop that row (catalogue.go). PostgreSQL sends one notification
-- for the same id however many times a transaction changes the row.
CREATE FUNCTION mapcommons_catalogue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		PERFORM pg_notify('mapcommons_catalogue', OLD.id::text);
	ELSE
		PERFORM pg_notify('mapcommons_catalogue', NEW.id::text);
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER datasets_catalogue_changed AFTER INSERT OR UPDATE OR DELETE ON datasets
	FOR EACH ROW EXECUTE FUNCTION mapcommons_catalogue_changed();
