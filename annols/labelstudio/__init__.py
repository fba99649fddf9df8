"""Label Studio: the one place annols speaks to a server.

- :mod:`~annols.labelstudio.client`: the API client (projects, tasks, exports, checked writes);
- :mod:`~annols.labelstudio.server`: the pip-installed server annols starts locally, hardened;
- :mod:`~annols.labelstudio.users`: annotator accounts;
- :mod:`~annols.labelstudio.incremental`: exports of only what changed since the last pull.
"""
