CREATE TABLE "standby_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"region" text NOT NULL,
	"sealed_key" text NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "standby_keys_region_idx" ON "standby_keys" USING btree ("region");