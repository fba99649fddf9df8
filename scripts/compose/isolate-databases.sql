-- One database per annotator for docker-compose.isolate.yml, run by the postgres image on
-- the database volume's first start (as POSTGRES_USER, who owns them). One line per
-- app-annotator-<n> service, named as its POSTGRE_NAME.
CREATE DATABASE labelstudio_annotator_1;
CREATE DATABASE labelstudio_annotator_2;
