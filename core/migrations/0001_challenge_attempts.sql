CREATE TABLE "challenge_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"app_id" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"solved_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "challenge_attempts_expires_at_idx" ON "challenge_attempts" USING btree ("expires_at");