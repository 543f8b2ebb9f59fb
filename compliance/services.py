"""Export jobs (docs/reference/reports.md): request, render on a worker, recover. The job row is the truth: a worker
claims a queued job with a lease and renews it while it renders; only the holder of the
current claim (its attempt number) may complete or fail the job; a job whose lease ran out
(its worker died) or whose broker message was lost is queued again by the recovery task."""

import datetime as dt
import logging
import tempfile
from collections.abc import Callable

from django.conf import settings
from django.core.files import File
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from compliance import eu_ai_act
from compliance.evidence import Scope
from compliance.models import ExportJob
from compliance.profiles import profile_save as profile_save  # system profiles (compliance/profiles.py)
from compliance.render_limits import RenderLimitExceeded, render_limits
from compliance.report import HashingWriter, Report, log_report_build, render_csv, render_json, report_build
from compliance.retention import exports_delete as exports_delete
from compliance.retention import exports_expire as exports_expire
from compliance.retention import exports_storage as exports_storage
from compliance.retention import quota_enforce
from config.exceptions import RateLimited
from config.leases import LeaseRenewal
from keys.models import Customer
from webhooks.services import event_emit

logger = logging.getLogger("trustcal.compliance")

QUEUED_RESEND_SECONDS = 60  # a queued job nobody claimed for this long lost its message
ACTIVE = [ExportJob.Status.QUEUED, ExportJob.Status.PROCESSING]


def export_request(
    *,
    customer: Customer,
    template: str,
    format: str,
    start: dt.datetime,
    end: dt.datetime,
    time_period: dict[str, str],
    filters: dict[str, list[str]],
    requested_by: str = "",
    per_person_figures: bool = True,
) -> ExportJob:
    """Store a queued job and ask a worker to render it once the transaction commits. A
    customer has at most EXPORTS_PER_CUSTOMER_ACTIVE jobs queued or rendering at a time.
    `per_person_figures` false: the report carries the team's oversight figures only."""
    with transaction.atomic():
        Customer.objects.select_for_update().filter(pk=customer.pk).exists()
        active = ExportJob.objects.filter(customer=customer, status__in=ACTIVE).count()
        if active >= settings.EXPORTS_PER_CUSTOMER_ACTIVE:
            raise RateLimited(
                f"{active} exports are already queued or rendering; wait for one to finish.",
                retry_after=10,
                code="EXPORT_LIMIT_EXCEEDED",
            )
        job = ExportJob.objects.create(
            customer=customer,
            template=template,
            format=format,
            time_period=time_period,
            period_start=start,
            period_end=end,
            filters=filters,
            requested_by=requested_by[:255],
            per_person_figures=per_person_figures,
            lease_until=timezone.now() + dt.timedelta(seconds=QUEUED_RESEND_SECONDS),
        )
        transaction.on_commit(lambda: _enqueue(job.pk), robust=True)
    return job


def _enqueue(export_id: str) -> None:
    from compliance.tasks import export_render

    export_render.delay(export_id)


def _lease_end() -> dt.datetime:
    return timezone.now() + dt.timedelta(seconds=settings.EXPORT_LEASE_SECONDS)


def _claim(export_id: str) -> int | None:
    """Take the job if it is queued, or processing with an expired lease: the new attempt
    number, or None when someone else holds it, it is finished, or its customer already has
    EXPORT_RENDERS_PER_CUSTOMER renders under way (the job stays queued and is sent again when
    one of them ends: one customer's jobs never hold every worker)."""
    now = timezone.now()
    customer_id = ExportJob.objects.filter(pk=export_id).values_list("customer_id", flat=True).first()
    if customer_id is None:
        return None
    with transaction.atomic():
        Customer.objects.select_for_update().filter(pk=customer_id).exists()  # one claim at a time
        job = (
            ExportJob.objects.select_for_update()
            .filter(pk=export_id)
            .filter(
                Q(status=ExportJob.Status.QUEUED) | Q(status=ExportJob.Status.PROCESSING, lease_until__lt=now)
            )
            .first()
        )
        if job is None:
            return None
        if job.attempts >= settings.EXPORT_MAX_ATTEMPTS:
            job.status = ExportJob.Status.FAILED
            job.error = f"The render was interrupted {job.attempts} times (worker lost); giving up."
            job.completed_at = now
            job.lease_until = None
            job.save(update_fields=["status", "error", "completed_at", "lease_until"])
            return None
        rendering = (
            ExportJob.objects.filter(
                customer_id=customer_id, status=ExportJob.Status.PROCESSING, lease_until__gte=now
            )
            .exclude(pk=export_id)
            .count()
        )
        if rendering >= settings.EXPORT_RENDERS_PER_CUSTOMER:
            if job.status == ExportJob.Status.PROCESSING:  # an expired claim: back to the queue
                job.status = ExportJob.Status.QUEUED
            job.lease_until = now + dt.timedelta(seconds=QUEUED_RESEND_SECONDS)
            job.save(update_fields=["status", "lease_until"])
            return None
        job.status = ExportJob.Status.PROCESSING
        job.attempts = F("attempts") + 1
        job.lease_until = _lease_end()
        job.started_at = now
        job.save(update_fields=["status", "attempts", "lease_until", "started_at"])
        job.refresh_from_db(fields=["attempts"])
        return job.attempts


def _next_of_customer(customer_id: str) -> None:
    """A render of this customer ended: send its oldest queued job now rather than at the
    next recovery pass."""
    next_id = (
        ExportJob.objects.filter(customer_id=customer_id, status=ExportJob.Status.QUEUED)
        .order_by("created_at")
        .values_list("pk", flat=True)
        .first()
    )
    if next_id is not None:
        transaction.on_commit(lambda: _enqueue(next_id), robust=True)


def _lease(export_id: str, attempt: int) -> LeaseRenewal:
    """Holds the claim while a render runs: the lease is renewed every third of its length, so
    a long render keeps its job and a killed worker loses it."""

    def renew() -> None:
        ExportJob.objects.filter(pk=export_id, status=ExportJob.Status.PROCESSING, attempts=attempt).update(
            lease_until=_lease_end()
        )

    return LeaseRenewal(f"export {export_id}", settings.EXPORT_LEASE_SECONDS / 3, renew)


def _renderer(format: str) -> Callable[[Report, HashingWriter], None]:
    if format == "pdf":
        from compliance.pdf import render_pdf  # WeasyPrint and matplotlib load on first use

        return render_pdf
    return {"json": render_json, "csv": render_csv}[format]


def _file_name(job: ExportJob) -> str:
    return f"{job.customer_id}/{job.id}.{job.format}"


def export_run(*, export_id: str) -> None:
    """Render a job: claim it, build the report data once, render the format to a temporary
    file while hashing it, store it, complete the job and fire the events. Safe to run twice."""
    attempt = _claim(export_id)
    if attempt is None:
        return
    job = ExportJob.objects.select_related("customer").get(pk=export_id)
    scope = Scope(
        customer=job.customer,
        start=job.period_start,
        end=job.period_end,
        time_period=job.time_period,
        filters=job.filters,
        per_person=job.per_person_figures,
    )
    try:
        renderer = _renderer(job.format)  # its libraries load outside the memory limit
        with _lease(export_id, attempt), tempfile.TemporaryFile(prefix="trustcal-export-") as tmp:
            with render_limits():
                build = log_report_build if job.format == "csv" else report_build
                report = build(scope=scope, template=job.template)
                writer = HashingWriter(tmp)
                renderer(report, writer)
            tmp.seek(0)
            name = exports_storage().save(_file_name(job), File(tmp))
    except Exception as exc:
        logger.exception("export %s failed", export_id)
        if isinstance(exc, RenderLimitExceeded):
            error = str(exc)
        else:  # the type only: the message may hold paths or SQL; the traceback is in the log
            error = (
                f"Rendering failed ({type(exc).__name__}); the service log has the details of {export_id}."
            )
        # A limit's alarm can land while a transaction of the render ends, leaving the
        # connection inside it while Django holds it done; the failure is recorded on a new one.
        if not connection.in_atomic_block:
            connection.close()
        with transaction.atomic():
            ExportJob.objects.filter(
                pk=export_id, status=ExportJob.Status.PROCESSING, attempts=attempt
            ).update(
                status=ExportJob.Status.FAILED, error=error, completed_at=timezone.now(), lease_until=None
            )
            _next_of_customer(job.customer_id)
        return
    _complete(job, attempt=attempt, name=name, writer=writer, report=report)


def _complete(job: ExportJob, *, attempt: int, name: str, writer: HashingWriter, report: Report) -> None:
    status = report.compliance_status or ""
    sha256 = writer.sha256.hexdigest()
    with transaction.atomic():
        done = ExportJob.objects.filter(
            pk=job.pk, status=ExportJob.Status.PROCESSING, attempts=attempt
        ).update(
            status=ExportJob.Status.COMPLETED,
            file_name=name,
            size_bytes=writer.size,
            sha256=sha256,
            compliance_status=status,
            completed_at=timezone.now(),
            lease_until=None,
            error="",
        )
        if not done:  # our claim expired and another attempt holds the job: it completes it
            transaction.on_commit(lambda: exports_storage().delete(name))
            return
        _next_of_customer(job.customer_id)
        quota_enforce(job.customer_id)
        download_url = f"/v1/export/{job.pk}/download"
        event_emit(
            customer=job.customer,
            type="compliance.report_ready",
            data={
                "export_id": job.pk,
                "template": job.template,
                "format": job.format,
                "download_url": download_url,
                "sha256": sha256,
            },
        )
        if status == eu_ai_act.NON_COMPLIANT:
            event_emit(
                customer=job.customer,
                type="audit.required",
                data={
                    "export_id": job.pk,
                    "template": job.template,
                    "compliance_status": status,
                    "time_period": job.time_period,
                    "total_decisions": report.decisions,
                    "download_url": download_url,
                },
            )


def exports_recover() -> int:
    """Beat: queue again the jobs whose worker died (processing, lease expired) and send again
    the queued jobs whose message was lost (unclaimed a minute after they were last sent). The
    claim decides who renders; a duplicate message finds the job taken and does nothing."""
    now = timezone.now()
    resend_at = now + dt.timedelta(seconds=QUEUED_RESEND_SECONDS)
    ids = list(
        ExportJob.objects.filter(status__in=ACTIVE, lease_until__lt=now)
        .order_by("created_at")
        .values_list("pk", flat=True)[:100]
    )
    if not ids:
        return 0
    # A job whose worker died is queued again; the attempt count stays, so the claim gives up
    # after EXPORT_MAX_ATTEMPTS; lease_until of a queued job is when to send it again.
    ExportJob.objects.filter(pk__in=ids, status__in=ACTIVE, lease_until__lt=now).update(
        status=ExportJob.Status.QUEUED, lease_until=resend_at
    )
    for export_id in ids:
        _enqueue(export_id)
    return len(ids)
