"""No models: the console presents the other apps. The module exists so that the app receives
post_migrate (Django sends it only to apps with a models module), which keeps the compliance-staff
group's permissions current."""
