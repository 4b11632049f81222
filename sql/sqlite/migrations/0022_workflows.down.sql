DROP TABLE workflow_node_run;
DROP TABLE workflow_run;
DROP TABLE workflow_version;
DROP TABLE workflow;
