ALTER TABLE "apps" ADD COLUMN "previous_app_key" text;--> statement-breakpoint
ALTER TABLE "apps" ADD COLUMN "previous_app_key_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "apps" ADD CONSTRAINT "apps_previous_app_key_unique" UNIQUE("previous_app_key");