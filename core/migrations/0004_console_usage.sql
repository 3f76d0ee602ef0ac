CREATE TABLE "usage_hourly" (
	"app_key" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"metric" text NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_hourly_app_key_hour_metric_pk" PRIMARY KEY("app_key","hour","metric")
);
--> statement-breakpoint
ALTER TABLE "apps" ADD COLUMN "managed_by" jsonb;