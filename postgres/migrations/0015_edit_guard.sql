-- An edit made from the dataset's row as this server last wrote it
-- (editfast.go) sends all of its statements with its COMMIT; those that
-- find the row or a feature not as the edit expects fail the transaction
-- with SQLSTATE MCM02 before the COMMIT, and the edit is made again the
-- long way, reading the row under its lock.
CREATE OR REPLACE FUNCTION mapcommons_expect(ok boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	IF ok IS NOT TRUE THEN
		RAISE EXCEPTION 'the row is not as the edit expected' USING ERRCODE = 'MCM02';
	END IF;
END
$$;
