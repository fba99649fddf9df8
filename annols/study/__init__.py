"""Study operations: what a coordinator does with a study on a Label Studio server.

push (tasks, gold items and attention checks in), pull (answers out, checked against the
manifest), judges (automatic raters kept off the server), adjudication, status and power
planning. They use the layers below: the definition, styles, formats, Label Studio and
analysis; nothing here renders a report.
"""
